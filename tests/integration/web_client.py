#!/usr/bin/python3
# The tool's side of raw requests to the web proxy (web_proxy_test.cc): what
# curl will not send. Prints the proxy's status line, or how it ended.
#   web_client.py raw 'BYTES'           send BYTES (Python escapes) to the proxy
#   web_client.py sni HOST:PORT NAME CA CONNECT HOST:PORT, then TLS naming NAME
#   web_client.py env                   the proxy variables as the tool sees them
#   web_client.py hold DIR 'BYTES'      write the proxy's URL to DIR/proxy, wait for
#                                       DIR/go, then as raw
import os, socket, ssl, sys

proxy = os.environ.get('HTTP_PROXY', 'http://127.0.0.1:1')
host, port = proxy[len('http://'):].rsplit(':', 1)

def connect():
    return socket.create_connection((host, int(port)), timeout=10)

def first_line(s):
    out = b''
    try:
        while b'\r\n' not in out:
            chunk = s.recv(4096)
            if not chunk:
                break
            out += chunk
    except OSError as e:
        return 'error ' + type(e).__name__
    return out.split(b'\r\n')[0].decode() if out else 'closed'

mode = sys.argv[1]
if mode == 'raw':
    s = connect()
    s.sendall(sys.argv[2].encode().decode('unicode_escape').encode('latin1'))
    print(first_line(s))
elif mode == 'sni':
    s = connect()
    s.sendall(f'CONNECT {sys.argv[2]} HTTP/1.1\r\nHost: {sys.argv[2]}\r\n\r\n'.encode())
    print(first_line(s))
    ctx = ssl.create_default_context(cafile=sys.argv[4])
    try:
        t = ctx.wrap_socket(s, server_hostname=sys.argv[3])
        t.sendall(b'GET /ok HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n')
        print('tls', first_line(t))
    except (OSError, ssl.SSLError) as e:
        print('tls refused', type(e).__name__)
elif mode == 'hold':
    import time
    with open(sys.argv[2] + '/proxy.tmp', 'w') as f:
        f.write(proxy)
    os.rename(sys.argv[2] + '/proxy.tmp', sys.argv[2] + '/proxy')
    for _ in range(400):
        if os.path.exists(sys.argv[2] + '/go'):
            break
        time.sleep(0.05)
    s = connect()
    s.sendall(sys.argv[3].encode().decode('unicode_escape').encode('latin1'))
    print(first_line(s))
elif mode == 'env':
    for k in sorted(os.environ):
        if 'PROXY' in k.upper() or k.startswith('GIT_CONFIG'):
            print(f'{k}={os.environ[k]}')
