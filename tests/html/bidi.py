"""tests/html/bidi.py — open a page in headless Firefox and read its DOM back, over WebDriver BiDi.

Firefox has no `--dump-dom`; its remote agent speaks WebDriver BiDi (W3C) on a WebSocket once it
is started with `--remote-debugging-port`. This module is the little client check_html.py needs:
start Firefox on a fresh profile, create a session, subscribe to the console log, navigate, and
evaluate one expression until it yields a value. The WebSocket framing (RFC 6455: a client sends
masked text frames; the server sends unmasked ones) is done here with the standard library, so
the test needs nothing beyond Debian's firefox-esr.
"""
import base64
import json
import os
import re
import shutil
import socket
import struct
import subprocess
import time


def find_firefox():
    for name in ("firefox-esr", "firefox"):
        path = shutil.which(name)
        if path:
            return path
    return None


class _WebSocket:
    def __init__(self, host, port, path, timeout=30):
        self.sock = socket.create_connection((host, port), timeout=timeout)
        key = base64.b64encode(os.urandom(16)).decode()
        request = ("GET %s HTTP/1.1\r\nHost: %s:%d\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                   "Sec-WebSocket-Key: %s\r\nSec-WebSocket-Version: 13\r\n\r\n" % (path, host, port, key))
        self.sock.sendall(request.encode())
        head = b""
        while b"\r\n\r\n" not in head:
            chunk = self.sock.recv(4096)
            if not chunk:
                raise AssertionError("Firefox closed the WebSocket during the handshake")
            head += chunk
        status = head.split(b"\r\n", 1)[0]
        if b" 101 " not in status:
            raise AssertionError("Firefox refused the WebSocket: %r" % status)
        self.buf = head.split(b"\r\n\r\n", 1)[1]

    def send(self, text):
        data = text.encode()
        header = bytes([0x81])
        n = len(data)
        if n < 126:
            header += bytes([0x80 | n])
        elif n < 1 << 16:
            header += bytes([0x80 | 126]) + struct.pack(">H", n)
        else:
            header += bytes([0x80 | 127]) + struct.pack(">Q", n)
        mask = os.urandom(4)
        self.sock.sendall(header + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(data)))

    def _read(self, n):
        while len(self.buf) < n:
            chunk = self.sock.recv(1 << 16)
            if not chunk:
                raise AssertionError("Firefox closed the WebSocket")
            self.buf += chunk
        out, self.buf = self.buf[:n], self.buf[n:]
        return out

    def recv(self):
        message = b""
        while True:
            b0, b1 = self._read(2)
            n = b1 & 0x7F
            if n == 126:
                n = struct.unpack(">H", self._read(2))[0]
            elif n == 127:
                n = struct.unpack(">Q", self._read(8))[0]
            mask = self._read(4) if b1 & 0x80 else None
            payload = self._read(n)
            if mask:
                payload = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
            opcode = b0 & 0x0F
            if opcode == 0x8:
                raise AssertionError("Firefox closed the WebSocket")
            if opcode == 0x9:  # ping: answer, keep reading
                continue
            message += payload
            if b0 & 0x80:
                return message.decode()

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass


class Firefox:
    """One headless Firefox with a BiDi session; use as a context manager."""

    def __init__(self, firefox, profile_dir, width=1400, height=1000):
        os.makedirs(profile_dir, exist_ok=True)
        # No first-run pages, no update or telemetry traffic: the page must be the only thing loaded.
        with open(os.path.join(profile_dir, "user.js"), "w") as f:
            for pref, value in (("browser.shell.checkDefaultBrowser", "false"), ("app.update.enabled", "false"),
                                ("datareporting.policy.dataSubmissionEnabled", "false"),
                                ("toolkit.telemetry.enabled", "false"), ("browser.startup.page", "0"),
                                ("network.dns.disabled", "true")):
                f.write('user_pref("%s", %s);\n' % (pref, value))
        env = dict(os.environ, MOZ_HEADLESS="1")
        self.proc = subprocess.Popen([firefox, "--headless", "--no-remote", "--profile", profile_dir,
                                      "--remote-debugging-port", "0", "--width", str(width), "--height", str(height)],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env, text=True)
        self.stderr_lines = []
        port = None
        deadline = time.time() + 60
        while time.time() < deadline:
            line = self.proc.stderr.readline()
            if not line:
                break
            self.stderr_lines.append(line)
            m = re.search(r"WebDriver BiDi listening on ws://([\d.]+|localhost):(\d+)", line)
            if m:
                port = int(m.group(2))
                break
        if port is None:
            self.proc.kill()
            raise AssertionError("Firefox did not start its WebDriver BiDi agent:\n" + "".join(self.stderr_lines[-20:]))
        self.ws = _WebSocket("127.0.0.1", port, "/session")
        self.next_id = 0
        self.log = []
        self.command("session.new", {"capabilities": {}})
        self.command("session.subscribe", {"events": ["log.entryAdded"]})
        tree = self.command("browsingContext.getTree", {})
        self.context = tree["contexts"][0]["context"]

    def command(self, method, params):
        self.next_id += 1
        my_id = self.next_id
        self.ws.send(json.dumps({"id": my_id, "method": method, "params": params}))
        while True:
            msg = json.loads(self.ws.recv())
            if msg.get("type") == "event" or ("method" in msg and "id" not in msg):
                if msg.get("method") == "log.entryAdded":
                    self.log.append(msg["params"])
                continue
            if msg.get("id") != my_id:
                continue
            if msg.get("type") == "error" or "error" in msg:
                raise AssertionError("BiDi %s failed: %s %s" % (method, msg.get("error"), msg.get("message", "")))
            return msg["result"]

    def navigate(self, url):
        self.command("browsingContext.navigate", {"context": self.context, "url": url, "wait": "complete"})

    def evaluate(self, expression):
        r = self.command("script.evaluate", {"expression": expression, "target": {"context": self.context},
                                             "awaitPromise": False})
        if r.get("type") == "exception":
            raise AssertionError("script exception: %s" % r.get("exceptionDetails", {}).get("text"))
        return r["result"].get("value")

    def wait_for(self, expression, timeout=30):
        """Evaluates `expression` until it gives a non-empty string; returns it."""
        deadline = time.time() + timeout
        while time.time() < deadline:
            v = self.evaluate(expression)
            if v:
                return v
            time.sleep(0.2)
        raise AssertionError("timed out after %d s waiting for: %s" % (timeout, expression))

    def console_errors(self):
        return ["%s: %s" % (e.get("level"), e.get("text")) for e in self.log if e.get("level") in ("error", "warn")]

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        try:
            self.command("session.end", {})
        except (AssertionError, OSError):
            pass
        self.ws.close()
        self.proc.kill()
        self.proc.wait(timeout=30)
