"""A TCP proxy that dies in the middle of a pack, for tests/t530-remotes.sh.

    cutproxy.py PORT BYTES

Listens on a free port of 127.0.0.1 (printed), and relays each connection to
127.0.0.1:PORT (a git daemon): all the client sends, and the server's first BYTES
bytes, then it cuts both sides, as a server or a link that dies mid-pack.  Each cut
is told on stderr.  Serves until killed."""
import socket
import sys
import threading

TARGET = int(sys.argv[1])
LIMIT = int(sys.argv[2])


def pipe(src, dst, limit, on_end):
    sent = 0
    try:
        while limit is None or sent < limit:
            data = src.recv(65536)
            if not data:
                break
            if limit is not None:
                data = data[:limit - sent]
            dst.sendall(data)
            sent += len(data)
    except OSError:
        pass
    on_end(sent)


def serve(client):
    server = socket.create_connection(("127.0.0.1", TARGET))

    def cut(sent):
        if sent >= LIMIT:
            print("cut after %d bytes" % sent, file=sys.stderr, flush=True)
        for s in (client, server):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            s.close()

    threading.Thread(target=pipe, args=(client, server, None, lambda n: None),
                     daemon=True).start()
    pipe(server, client, LIMIT, cut)


s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", 0))
s.listen(16)
print(s.getsockname()[1], flush=True)
sys.stdout.close()
while True:
    conn, _ = s.accept()
    threading.Thread(target=serve, args=(conn,), daemon=True).start()
