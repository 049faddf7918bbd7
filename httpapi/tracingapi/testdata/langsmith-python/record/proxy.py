# Recording proxy: forwards every request to the upstream, and records the raw
# request (method, target, headers, body bytes) and the response (status, headers, body) as
# files NNN.req.json/.req.body/.resp.json/.resp.body in OUT.
import http.server, socketserver, sys, json, os, threading, http.client
UP_HOST, UP_PORT = sys.argv[2], int(sys.argv[3])
OUT = sys.argv[4]
os.makedirs(OUT, exist_ok=True)
lock = threading.Lock(); n = [0]
class H(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def handle_one(self):
        te = self.headers.get("Transfer-Encoding", "")
        if "chunked" in te.lower():
            body = b""
            while True:
                size = int(self.rfile.readline().strip().split(b";")[0], 16)
                if size == 0:
                    self.rfile.readline(); break
                body += self.rfile.read(size); self.rfile.readline()
        else:
            body = self.rfile.read(int(self.headers.get("Content-Length", 0) or 0))
        with lock:
            n[0] += 1; i = n[0]
        hdrs = [[k, v] for k, v in self.headers.items()]
        c = http.client.HTTPConnection(UP_HOST, UP_PORT, timeout=60)
        fwd = {k: v for k, v in self.headers.items() if k.lower() not in ("transfer-encoding", "content-length", "connection")}
        fwd["Content-Length"] = str(len(body))
        c.request(self.command, self.path, body=body if body or self.command in ("POST","PATCH","PUT") else None, headers=fwd)
        r = c.getresponse(); rb = r.read()
        base = os.path.join(OUT, "%03d" % i)
        json.dump({"method": self.command, "target": self.path, "headers": hdrs, "chunked": "chunked" in te.lower()}, open(base + ".req.json", "w"), indent=1)
        open(base + ".req.body", "wb").write(body)
        json.dump({"status": r.status, "headers": [[k, v] for k, v in r.getheaders()]}, open(base + ".resp.json", "w"), indent=1)
        open(base + ".resp.body", "wb").write(rb)
        self.send_response(r.status)
        for k, v in r.getheaders():
            if k.lower() in ("transfer-encoding", "content-length", "connection", "date"): continue
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(rb)))
        self.end_headers(); self.wfile.write(rb)
    do_GET = do_POST = do_PATCH = do_PUT = do_DELETE = handle_one
    def log_message(self, *a): pass
class S(socketserver.ThreadingMixIn, http.server.HTTPServer): daemon_threads = True
S(("127.0.0.1", int(sys.argv[1])), H).serve_forever()
