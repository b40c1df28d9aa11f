#!/usr/bin/env python3
"""An S3 API server on loopback that ignores preconditions, as some S3-compatible servers
and emulators do (the GCS emulator on PyPI, older MinIO and Ceph releases): moto's server
with the `If-None-Match` and `If-Match` request headers removed before moto sees them, so a
conditional create overwrites instead of being refused.

  s3_no_preconditions.py PORT

Used by interop.py's `no_preconditions` case: alluvium's capability probe must find that
put-if-absent does not hold here and refuse to write (SPEC §18 R2), instead of committing
through a store where two writers can both win a version.
"""
import sys

from moto.moto_server.werkzeug_app import DomainDispatcherApplication, create_backend_app
from moto.server import MotoRequestHandler
from werkzeug.serving import run_simple

moto_app = DomainDispatcherApplication(create_backend_app)


def without_preconditions(environ, start_response):
    environ.pop("HTTP_IF_NONE_MATCH", None)
    environ.pop("HTTP_IF_MATCH", None)
    return moto_app(environ, start_response)


run_simple("127.0.0.1", int(sys.argv[1]), without_preconditions, threaded=False, processes=1,
           request_handler=MotoRequestHandler)
