#!/usr/bin/python3
"""A real SMTP server for the notify tests (Debian's aiosmtpd), on 127.0.0.1.

    smtpd.py DIR [PORT]

Listens on PORT (0 or absent: a free one), writes the port to DIR/port once it
accepts connections, and records every accepted message as DIR/msg-N.json:
envelope (mail_from, rcpt_tos), the raw data, and what Python's email package makes
of it (headers decoded, body decoded, defects, longest line, bare LFs).

Behaviour is read from DIR/mode at every command (missing file: accept):
    accept            250 everywhere
    data4xx / data5xx 451 / 554 at the end of DATA
    rcpt5xx ADDR      550 for RCPT TO:<ADDR> only (rcpt4xx likewise with 450)
    hang-mail         never answer MAIL FROM
    hang-data         never answer the end of DATA

SMTPD_NO8BITMIME=1 leaves 8BITMIME out of the EHLO answer (it is offered by default);
each message records "body_param" (the BODY= of its MAIL FROM, or null).

TLS and AUTH from the environment (all optional):
    SMTPD_TLS=starttls|implicit   with SMTPD_CERT and SMTPD_KEY (PEM files)
    SMTPD_AUTH=user:password      AUTH PLAIN/LOGIN required (over TLS only)
Each message then records "tls" (the session was encrypted) and "auth_user".
"""
import asyncio
import email
import email.policy
import json
import os
import ssl
import sys

from aiosmtpd.smtp import SMTP, AuthResult, LoginPassword

DIR = sys.argv[1]
PORT = int(sys.argv[2]) if len(sys.argv) > 2 else 0
count = 0


def mode():
    try:
        with open(os.path.join(DIR, "mode")) as f:
            words = f.read().split()
    except FileNotFoundError:
        return ["accept"]
    return words or ["accept"]


def write_json(name, obj):
    path = os.path.join(DIR, name)
    with open(path + ".tmp", "w") as f:
        json.dump(obj, f, indent=1)
    os.rename(path + ".tmp", path)


def describe(data):
    lines = data.split(b"\r\n")
    msg = email.message_from_bytes(data, policy=email.policy.default)
    headers = [[k, str(v)] for k, v in msg.items()]
    head = data.split(b"\r\n\r\n", 1)[0]
    attachments = []
    try:
        if msg.is_multipart():
            body = msg.get_body(preferencelist=("plain",)).get_content()
            for part in msg.iter_attachments():
                attachments.append({"name": part.get_filename(),
                                    "type": part.get_content_type(),
                                    "content": part.get_content().replace("\r\n", "\n")})
        else:
            body = msg.get_content()
    except Exception as e:  # the test fails on it, with the reason
        body = "UNDECODABLE: %r" % e
    return {
        "headers": headers,
        "header_names": [k for k, _ in headers],
        "defects": [repr(d) for d in msg.defects]
        + [repr(d) for k in msg.keys() for d in getattr(msg[k], "defects", ())],
        "max_line": max(len(l) for l in lines),
        "max_header_line": max(len(l) for l in head.split(b"\r\n")),
        "bare_lf": data.replace(b"\r\n", b"").count(b"\n"),
        "bare_cr": data.replace(b"\r\n", b"").count(b"\r"),
        "non_ascii": any(b > 127 for b in data),
        "body": body.replace("\r\n", "\n"),
        "attachments": attachments,
    }


class Handler:
    async def handle_MAIL(self, server, session, envelope, address, options):
        if mode()[0] == "hang-mail":
            await asyncio.sleep(3600)
        envelope.mail_from = address
        envelope.mail_options = options
        return "250 OK"

    async def handle_RCPT(self, server, session, envelope, address, options):
        m = mode()
        if m[0] == "rcpt5xx" and address in m[1:]:
            return "550 5.1.1 <%s>: Recipient address rejected: no such user" % address
        if m[0] == "rcpt4xx" and address in m[1:]:
            return "450 4.2.1 <%s>: mailbox busy, try later" % address
        envelope.rcpt_tos.append(address)
        return "250 OK"

    async def handle_DATA(self, server, session, envelope):
        global count
        m = mode()[0]
        if m == "hang-data":
            await asyncio.sleep(3600)
        if m == "data4xx":
            return "451 4.3.0 Temporary local problem, try again"
        if m == "data5xx":
            return "554 5.7.1 Message rejected as spam"
        count += 1
        rec = {
            "tls": server.transport.get_extra_info("ssl_object") is not None,
            "auth_user": session.auth_data.login.decode() if session.auth_data else None,
            "mail_from": envelope.mail_from,
            "body_param": next((o.split("=", 1)[1] for o in envelope.mail_options
                                if o.upper().startswith("BODY=")), None),
            "rcpt_tos": envelope.rcpt_tos,
            "data": envelope.content.decode("latin-1"),
        }
        rec.update(describe(envelope.content))
        write_json("msg-%d.json" % count, rec)
        return "250 2.0.0 Ok: queued as %d" % count


def authenticator(server, session, envelope, mechanism, auth_data):
    user, password = os.environ["SMTPD_AUTH"].split(":", 1)
    ok = (isinstance(auth_data, LoginPassword) and auth_data.login == user.encode()
          and auth_data.password == password.encode())
    return AuthResult(success=ok, handled=False, auth_data=auth_data)


class NoEightBitSMTP(SMTP):
    """An SMTP server whose EHLO answer does not offer 8BITMIME."""

    async def push(self, status):
        if status.upper() in ("250-8BITMIME", "250 8BITMIME"):
            return
        await super().push(status)


def protocol_factory():
    tls = os.environ.get("SMTPD_TLS", "none")
    kw = {}
    if tls != "none":
        ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        ctx.load_cert_chain(os.environ["SMTPD_CERT"], os.environ["SMTPD_KEY"])
        if tls == "starttls":
            kw.update(tls_context=ctx, require_starttls=True)
    if os.environ.get("SMTPD_AUTH"):
        # implicit TLS is TLS from the first byte, which aiosmtpd's own check misses
        kw.update(authenticator=authenticator, auth_required=True,
                  auth_require_tls=tls == "starttls")
    cls = NoEightBitSMTP if os.environ.get("SMTPD_NO8BITMIME") else SMTP
    return cls(Handler(), hostname="smtpd.test", decode_data=False, **kw)


def server_ssl():
    if os.environ.get("SMTPD_TLS") != "implicit":
        return None
    ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ctx.load_cert_chain(os.environ["SMTPD_CERT"], os.environ["SMTPD_KEY"])
    return ctx


async def main():
    loop = asyncio.get_running_loop()
    server = await loop.create_server(protocol_factory, "127.0.0.1", PORT, ssl=server_ssl())
    port = server.sockets[0].getsockname()[1]
    write_json("port.json", port)
    os.rename(os.path.join(DIR, "port.json"), os.path.join(DIR, "port"))
    async with server:
        await server.serve_forever()


asyncio.run(main())
