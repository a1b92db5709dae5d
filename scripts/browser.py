#!/usr/bin/env python3
"""Opens a page in headless Chromium, waits until a JavaScript condition holds, then saves the DOM
and a screenshot. `chromium --headless --dump-dom` dumps at the load event; the live page of
`hush serve` changes after it (events arrive over its event stream), so the tests drive Chromium
through the DevTools protocol instead. Standard library only.

    python3 scripts/browser.py URL [--wait-for JS] [--timeout S] [--dom FILE] [--screenshot FILE]
                               [--width PX] [--height PX] [--full-page]

Exit status: 0 done; 3 the condition did not hold in time (DOM and screenshot still saved);
2 Chromium could not be started.
"""
import argparse, base64, json, os, shutil, socket, struct, subprocess, sys, tempfile, time, urllib.request


class DevTools:
    """A minimal WebSocket client for one DevTools target (RFC 6455: text frames, client-masked)."""

    def __init__(self, url):
        host, rest = url[len("ws://"):].split("/", 1)
        name, port = host.split(":")
        self.sock = socket.create_connection((name, int(port)), timeout=30)
        key = base64.b64encode(os.urandom(16)).decode()
        self.sock.sendall(
            (f"GET /{rest} HTTP/1.1\r\nHost: {host}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
             f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n").encode())
        head = b""
        while b"\r\n\r\n" not in head:
            chunk = self.sock.recv(1)
            if not chunk:
                raise OSError("DevTools closed the connection during the handshake")
            head += chunk
        if b" 101 " not in head.split(b"\r\n")[0]:
            raise OSError("DevTools refused the WebSocket: " + head.decode(errors="replace"))
        self.next_id = 0
        self.events = []

    def _read(self, n):
        data = b""
        while len(data) < n:
            chunk = self.sock.recv(n - len(data))
            if not chunk:
                raise OSError("DevTools closed the connection")
            data += chunk
        return data

    def _send(self, text):
        payload = text.encode()
        mask = os.urandom(4)
        n = len(payload)
        head = bytes([0x81]) + (bytes([0x80 | n]) if n < 126 else
                                bytes([0x80 | 126]) + struct.pack(">H", n) if n < 65536 else
                                bytes([0x80 | 127]) + struct.pack(">Q", n))
        self.sock.sendall(head + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload)))

    def _receive(self):
        message = b""
        while True:
            b0, b1 = self._read(2)
            n = b1 & 0x7F
            if n == 126:
                n = struct.unpack(">H", self._read(2))[0]
            elif n == 127:
                n = struct.unpack(">Q", self._read(8))[0]
            data = self._read(n)
            if b0 & 0x0F == 0x8:
                raise OSError("DevTools closed the WebSocket")
            if b0 & 0x0F in (0x9, 0xA):
                continue
            message += data
            if b0 & 0x80:
                return json.loads(message)

    def call(self, method, **params):
        self.next_id += 1
        self._send(json.dumps({"id": self.next_id, "method": method, "params": params}))
        while True:
            message = self._receive()
            if message.get("id") == self.next_id:
                if "error" in message:
                    raise OSError(f"{method}: {message['error']}")
                return message.get("result", {})
            self.events.append(message)

    def wait_event(self, method, timeout):
        deadline = time.time() + timeout
        while time.time() < deadline:
            if any(e.get("method") == method for e in self.events):
                return True
            self.sock.settimeout(max(0.1, deadline - time.time()))
            try:
                self.events.append(self._receive())
            except socket.timeout:
                break
        self.sock.settimeout(30)
        return False

    def evaluate(self, expression):
        result = self.call("Runtime.evaluate", expression=expression, returnByValue=True)
        return result.get("result", {}).get("value")


def chromium_binary():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("url")
    parser.add_argument("--wait-for", default="true", help="a JavaScript expression to wait for")
    parser.add_argument("--timeout", type=float, default=20)
    parser.add_argument("--dom")
    parser.add_argument("--screenshot")
    parser.add_argument("--width", type=int, default=1280)
    parser.add_argument("--height", type=int, default=900)
    parser.add_argument("--full-page", action="store_true", help="the screenshot holds the whole page")
    args = parser.parse_args()

    binary = chromium_binary()
    if not binary:
        print("browser.py: chromium is not installed (scripts/setup.sh installs it)", file=sys.stderr)
        return 2
    profile = tempfile.mkdtemp(prefix="hush-chromium-")
    process = subprocess.Popen(
        [binary, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--hide-scrollbars",
         "--no-first-run", "--remote-debugging-port=0", f"--user-data-dir={profile}", "about:blank"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        port_file = os.path.join(profile, "DevToolsActivePort")
        deadline = time.time() + 20
        while not (os.path.exists(port_file) and open(port_file).read().count("\n") >= 1):
            if time.time() > deadline or process.poll() is not None:
                print("browser.py: chromium did not start", file=sys.stderr)
                return 2
            time.sleep(0.05)
        port = open(port_file).read().split("\n")[0]
        targets = json.load(urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=10))
        page = next(t for t in targets if t.get("type") == "page")
        tools = DevTools(page["webSocketDebuggerUrl"])
        tools.call("Page.enable")
        tools.call("Emulation.setDeviceMetricsOverride", width=args.width, height=args.height,
                   deviceScaleFactor=1, mobile=args.width < 600)
        tools.call("Page.navigate", url=args.url)
        tools.wait_event("Page.loadEventFired", args.timeout)
        status = 3
        deadline = time.time() + args.timeout
        while time.time() < deadline:
            if tools.evaluate(f"Boolean({args.wait_for})"):
                status = 0
                break
            time.sleep(0.1)
        if status:
            print(f"browser.py: still false after {args.timeout:g} s: {args.wait_for}", file=sys.stderr)
        if args.dom:
            with open(args.dom, "w") as f:
                f.write(tools.evaluate("document.documentElement.outerHTML") or "")
        if args.screenshot:
            if args.full_page:
                height = tools.evaluate("Math.ceil(document.documentElement.scrollHeight)") or args.height
                tools.call("Emulation.setDeviceMetricsOverride", width=args.width, height=int(height),
                           deviceScaleFactor=1, mobile=args.width < 600)
            shot = tools.call("Page.captureScreenshot", format="png")
            with open(args.screenshot, "wb") as f:
                f.write(base64.b64decode(shot["data"]))
        return status
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
        shutil.rmtree(profile, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
