#!/usr/bin/env python3
"""Answers every HTTP/1.1 request with the DSCP and ECN bits its connection arrived with.

    python3 tos_report_server.py --port-file FILE [--ipv6]

Listens on 127.0.0.1 (or ::1) on a port of the kernel's choice, written to FILE. For each
connection: IP_RECVTOS (or IPV6_RECVTCLASS) is set on the listening socket, so the accepted one
can report, through Linux's IP_PKTOPTIONS (IPV6_2292PKTOPTIONS), the TOS byte of the packets
that opened it; the body of every response on it is "tos=N" (N the byte, 0 when none was
reported). Keep-alive: one response per request until the client closes.
"""
import argparse
import socket
import struct
import threading

IP_PKTOPTIONS = 9
IPV6_2292PKTOPTIONS = 6
IPV6_RECVTCLASS = 66
IPV6_TCLASS = 67


def received_tos(conn, ipv6):
    level = socket.IPPROTO_IPV6 if ipv6 else socket.IPPROTO_IP
    raw = conn.getsockopt(level, IPV6_2292PKTOPTIONS if ipv6 else IP_PKTOPTIONS, 256)
    offset = 0
    while offset + 16 <= len(raw):
        length, cmsg_level, cmsg_type = struct.unpack_from("NiI", raw, offset)
        if length < 16:
            break
        want = IPV6_TCLASS if ipv6 else socket.IP_TOS
        if cmsg_level == level and cmsg_type == want:
            data = raw[offset + 16: offset + length]
            return data[0] if len(data) == 1 else struct.unpack_from("i", data)[0]
        offset += (length + 7) & ~7
    return 0


def serve(conn, ipv6):
    tos = received_tos(conn, ipv6)
    buffer = b""
    with conn:
        while True:
            while b"\r\n\r\n" not in buffer:
                data = conn.recv(65536)
                if not data:
                    return
                buffer += data
            _, buffer = buffer.split(b"\r\n\r\n", 1)
            body = ("tos=%d" % tos).encode()
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--port-file", required=True)
    parser.add_argument("--ipv6", action="store_true")
    args = parser.parse_args()
    family = socket.AF_INET6 if args.ipv6 else socket.AF_INET
    server = socket.socket(family, socket.SOCK_STREAM)
    server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    if args.ipv6:
        server.setsockopt(socket.IPPROTO_IPV6, IPV6_RECVTCLASS, 1)
    else:
        server.setsockopt(socket.IPPROTO_IP, socket.IP_RECVTOS, 1)
    server.bind(("::1" if args.ipv6 else "127.0.0.1", 0))
    server.listen(64)
    with open(args.port_file + ".tmp", "w") as f:
        f.write(str(server.getsockname()[1]))
    import os
    os.rename(args.port_file + ".tmp", args.port_file)
    while True:
        conn, _ = server.accept()
        threading.Thread(target=serve, args=(conn, args.ipv6), daemon=True).start()


if __name__ == "__main__":
    main()
