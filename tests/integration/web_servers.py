#!/usr/bin/python3
# Test servers for the web proxy's integration tests (web_proxy_test.cc):
# https and http, each on 127.0.0.1 and on 127.0.0.2 at the same port (the
# second is where a rebinding answer would lead). Every accepted connection
# is logged to DIR/hits as "TAG ADDRESS" before anything is read, so a test
# can tell that a server saw no connection at all. Writes "HTTPS_PORT
# HTTP_PORT" to DIR/ports; stops by itself when DIR/stop appears or after
# two minutes.
#   usage: web_servers.py DIR CERT KEY
import http.server, os, socketserver, ssl, sys, threading, time

d, cert, key = sys.argv[1:4]
lock = threading.Lock()
ports = {}

def hit(tag, addr, path=''):
    with lock, open(os.path.join(d, 'hits'), 'a') as f:
        f.write(f'{tag} {addr} {path}\n')

class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = 'HTTP/1.1'
    def log_message(self, *a):
        pass
    def reply(self, code, body, headers=()):
        self.send_response(code)
        for k, v in headers:
            self.send_header(k, v)
        self.send_header('Content-Length', str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def do_GET(self):
        hit(self.server.tag, 'request', self.path)
        p = self.path
        if p.startswith('/big'):  # /big?n=BYTES[&nolength]
            q = dict(kv.split('=') if '=' in kv else (kv, '') for kv in p.split('?', 1)[1].split('&'))
            n = int(q['n'])
            self.send_response(200)
            if 'nolength' in q:
                self.send_header('Connection', 'close')
                self.close_connection = True
            else:
                self.send_header('Content-Length', str(n))
            self.end_headers()
            block = b'x' * 65536
            while n > 0:
                self.wfile.write(block[:min(n, len(block))])
                n -= len(block)
        elif p.startswith('/files/') and '..' not in p:  # static files (a dumb git repo)
            path = os.path.join(d, p[1:].split('?')[0])
            if os.path.isdir(path):
                path = os.path.join(path, 'index.html')
            if os.path.isfile(path):
                kind = 'text/html' if path.endswith('.html') else 'application/octet-stream'
                with open(path, 'rb') as f:
                    self.reply(200, f.read(), [('Content-Type', kind)])
            else:
                self.reply(404, b'')
        elif p == '/slow':
            time.sleep(6)
            self.reply(200, b'slow\n')
        elif p == '/redirect-other':
            self.reply(302, b'', [('Location', f'http://other.example:{ports["http"]}/ok')])
        elif p == '/redirect-same':
            self.reply(302, b'', [('Location', '/ok')])
        else:
            self.reply(200, b'ok\n')
    def do_HEAD(self):
        self.reply(200, b'')
    def do_POST(self):
        n = int(self.headers.get('Content-Length', '0'))
        self.reply(200, b'posted %d\n' % len(self.rfile.read(n)))

class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = False
    def __init__(self, addr, tag, ctx):
        self.tag, self.ctx = tag, ctx
        super().__init__(addr, Handler)
    def handle_error(self, request, client_address):
        pass  # a client cut off (the proxy's caps) is expected here
    def verify_request(self, request, client_address):
        hit(self.tag, request.getsockname()[0])
        return True
    def finish_request(self, request, client_address):
        if self.ctx:
            request.settimeout(10)
            try:
                request = self.ctx.wrap_socket(request, server_side=True)
            except Exception:
                return
            request.settimeout(None)
        Handler(request, client_address, self)

ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
ctx.load_cert_chain(cert, key)
servers = []
for tag, c in (('https', ctx), ('http', None)):
    first = Server(('127.0.0.1', 0), tag, c)
    ports[tag] = first.server_address[1]
    servers += [first, Server(('127.0.0.2', ports[tag]), tag, c)]
for s in servers:
    threading.Thread(target=s.serve_forever, daemon=True).start()
with open(os.path.join(d, 'ports.tmp'), 'w') as f:
    f.write(f'{ports["https"]} {ports["http"]}\n')
os.rename(os.path.join(d, 'ports.tmp'), os.path.join(d, 'ports'))
for _ in range(1200):
    if os.path.exists(os.path.join(d, 'stop')):
        break
    time.sleep(0.1)
