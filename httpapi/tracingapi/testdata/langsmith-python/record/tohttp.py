# turn the proxy's recordings into raw HTTP/1.1 messages, as they were on the wire
import json, os, sys, glob, http.client
src, dst = sys.argv[1], sys.argv[2]
os.makedirs(dst, exist_ok=True)
n = 0
for rq in sorted(glob.glob(os.path.join(src, "*.req.json"))):
    base = rq[:-len(".req.json")]
    req = json.load(open(rq))
    if req["target"] == "/ok":
        continue
    n += 1
    body = open(base + ".req.body", "rb").read()
    assert not req["chunked"]
    head = "%s %s HTTP/1.1\r\n" % (req["method"], req["target"]) + "".join("%s: %s\r\n" % (k, v) for k, v in req["headers"]) + "\r\n"
    open(os.path.join(dst, "%02d.request.http" % n), "wb").write(head.encode("latin-1") + body)
    resp = json.load(open(base + ".resp.json"))
    rbody = open(base + ".resp.body", "rb").read()
    head = "HTTP/1.1 %d %s\r\n" % (resp["status"], http.client.responses[resp["status"]]) + "".join("%s: %s\r\n" % (k, v) for k, v in resp["headers"]) + "\r\n"
    open(os.path.join(dst, "%02d.response.http" % n), "wb").write(head.encode("latin-1") + rbody)
    print("%02d" % n, req["method"], req["target"], resp["status"])
