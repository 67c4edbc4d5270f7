#!/usr/bin/env python3
"""The reference's Glance/Nova/Neutron stand-in with TCP_NODELAY.

  os_stub_nodelay.py STUB_DIR HOST PORT

Serves the reference's stub/os_stub.py handler unchanged, except that every
accepted connection sets TCP_NODELAY. The stand-in writes the headers and the
body of a response in two segments; on a reused (keep-alive) connection
Nagle's algorithm then holds the body until the client's delayed ACK, about
40 ms per lookup. Clients that reuse connections (openkeel-magnum's HTTP
client; keystoneauth sessions within one request) would otherwise measure the
stand-in's stall rather than their own work. Standard library only.
"""

import sys
from http.server import ThreadingHTTPServer


def main():
    stub_dir, host, port = sys.argv[1], sys.argv[2], int(sys.argv[3])
    sys.path.insert(0, stub_dir)
    import os_stub  # the reference's stand-in, imported, not copied

    os_stub.H.disable_nagle_algorithm = True
    ThreadingHTTPServer((host, port), os_stub.H).serve_forever()


if __name__ == "__main__":
    main()
