"""A server that accepts connections and never answers (a hung or black-holed git
remote), for tests/t520-fetch-hang.sh.  Prints its port, then serves until killed."""
import socket
import sys

s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", 0))
s.listen(64)
print(s.getsockname()[1], flush=True)
sys.stdout.close()
held = []
while True:
    conn, _ = s.accept()
    held.append(conn)   # kept open, never read or written
