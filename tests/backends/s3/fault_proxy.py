"""A test tool: an HTTP proxy in front of the real S3 server that injects the faults a rules file
names, so that tests see a real server misbehave (it is no mock: every request it lets through is
served by the server).

The rules file holds one rule a line, read again on every request; when its text changes, the
rules' counts start again. A rule applies to the requests whose "METHOD /path?query" line contains
its TEXT (every request when TEXT is "*"):
    slowdown N TEXT   the next N such requests get HTTP 503 SlowDown (S3's throttling answer)
    delay MS TEXT     each such request waits MS milliseconds before it is served (a slow server)
    stop N TEXT       after N such requests, every request (of any kind) gets its connection
                      closed without an answer, as from a server that stopped
The proxy forwards each request's own Host header, so SigV4 signatures stay valid.
"""

import http.client
import http.server
import threading
import time

SLOWDOWN_BODY = (b'<?xml version="1.0" encoding="UTF-8"?><Error><Code>SlowDown</Code>'
                 b"<Message>Please reduce your request rate.</Message></Error>")
# Hop-by-hop headers, and the one the proxy answers itself.
NOT_FORWARDED = {"connection", "keep-alive", "transfer-encoding", "expect", "proxy-connection"}


class Rules:
    """The rules file's rules and their counts, kept while its text stays the same."""

    def __init__(self, path):
        self.path = path
        self.lock = threading.Lock()
        self.text = None
        self.rules = []
        self.stopped = False

    def _reload(self):
        try:
            with open(self.path, encoding="utf-8") as f:
                text = f.read()
        except FileNotFoundError:
            text = ""
        if text == self.text:
            return
        self.text = text
        self.stopped = False
        self.rules = []
        for line in text.splitlines():
            words = line.split(maxsplit=2)
            if len(words) == 3:
                self.rules.append({"kind": words[0], "n": int(words[1]), "text": words[2],
                                   "seen": 0})

    def decide(self, line):
        """What to do with the request whose line is `line`: (action, delay seconds)."""
        with self.lock:
            self._reload()
            if self.stopped:
                return "stop", 0.0
            delay = 0.0
            for rule in self.rules:
                if rule["text"] != "*" and rule["text"] not in line:
                    continue
                if rule["kind"] == "delay":
                    delay += rule["n"] / 1000.0
                elif rule["kind"] == "slowdown" and rule["seen"] < rule["n"]:
                    rule["seen"] += 1
                    return "slowdown", delay
                elif rule["kind"] == "stop":
                    if rule["seen"] >= rule["n"]:
                        self.stopped = True
                        return "stop", 0.0
                    rule["seen"] += 1
            return "forward", delay


def handler_for(rules, server_host, server_port):
    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keep-alive, and 100-continue answered here

        def log_message(self, *args):
            pass

        def _body(self):
            length = int(self.headers.get("Content-Length", "0"))
            return self.rfile.read(length) if length > 0 else b""

        def _handle(self):
            action, delay = rules.decide(f"{self.command} {self.path}")
            if action == "stop":
                self.close_connection = True  # no answer at all
                return
            body = self._body()
            if delay > 0:
                time.sleep(delay)
            if action == "slowdown":
                self.send_response(503)
                self.send_header("Content-Type", "application/xml")
                self.send_header("Content-Length", str(len(SLOWDOWN_BODY)))
                self.end_headers()
                self.wfile.write(SLOWDOWN_BODY)
                return
            upstream = http.client.HTTPConnection(server_host, server_port, timeout=120)
            try:
                upstream.putrequest(self.command, self.path, skip_host=True,
                                    skip_accept_encoding=True)
                for name, value in self.headers.items():
                    if name.lower() not in NOT_FORWARDED and name.lower() != "content-length":
                        upstream.putheader(name, value)
                if body or self.command in ("PUT", "POST"):
                    upstream.putheader("Content-Length", str(len(body)))
                upstream.endheaders(body if body else None)
                answer = upstream.getresponse()
                data = answer.read()
            finally:
                upstream.close()
            self.send_response(answer.status, answer.reason)
            for name, value in answer.getheaders():
                if name.lower() not in NOT_FORWARDED and name.lower() != "content-length":
                    self.send_header(name, value)
            # A HEAD's answer has no body, but says how long the object is.
            length = answer.getheader("Content-Length") if self.command == "HEAD" else len(data)
            self.send_header("Content-Length", str(length if length is not None else 0))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(data)

        do_GET = do_PUT = do_POST = do_DELETE = do_HEAD = _handle

    return Handler


class Server(http.server.ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 128  # a client opens a connection per request in flight


def start(rules_path, server_host, server_port):
    """Starts the proxy on a free port of 127.0.0.1 in threads of this process; its endpoint."""
    proxy = Server(("127.0.0.1", 0), handler_for(Rules(rules_path), server_host, server_port))
    threading.Thread(target=proxy.serve_forever, daemon=True).start()
    host, port = proxy.server_address
    return proxy, f"http://{host}:{port}"
