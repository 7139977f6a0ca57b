"""Runs a command against a private S3 server: moto's, in this process, on 127.0.0.1.

Usage: moto_fixture.py [--tls] COMMAND [ARGS...]

The server binds port 0 (the kernel picks a free port: parallel ctest runs never collide) and
enforces authentication once the set-up requests are done: a user with an access key and a policy
that allows everything but writes under keys with a "denied" folder, one bucket, and an unfinished
multipart upload of fixture/stale/upload.bin are made first; every later request must carry a valid SigV4 signature of that key, so signing errors and
wrong credentials fail as on a real store. COMMAND runs with CKPT_TEST_S3_ENDPOINT,
CKPT_TEST_S3_BUCKET, CKPT_TEST_S3_REGION, AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY set; the
server stops when it exits, and this script exits with its status. CKPT_TEST_S3_PROXY is the
endpoint of a proxy in front of the same server (fault_proxy.py) that injects the faults the file
CKPT_TEST_S3_FAULTS names (none while it is empty or absent).
With --tls, the same server (moto keeps its state per process) also answers https on another port,
CKPT_TEST_S3_TLS_ENDPOINT, with a certificate for 127.0.0.1 that openssl makes now in a temporary
directory, signed by a certificate authority made with it (CKPT_TEST_S3_CA_FILE); a second one,
which signed nothing, is CKPT_TEST_S3_OTHER_CA_FILE. Without openssl those stay unset.
Without moto (ci/setup.sh installs it into .deps/venv) it exits 77, which ctest reports as a skip.
"""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
import fault_proxy  # noqa: E402 (after the line above)

# Requests made without authentication, before the server checks signatures: create the user,
# its access key, its policy, the bucket and an abandoned upload (set_up makes exactly these).
SET_UP_REQUESTS = 5
os.environ["INITIAL_NO_AUTH_ACTION_COUNT"] = str(SET_UP_REQUESTS)
# The set-up's own client signs with throwaway keys; the command gets the user's real ones.
os.environ["AWS_ACCESS_KEY_ID"] = "set-up"
os.environ["AWS_SECRET_ACCESS_KEY"] = "set-up"

REGION = "us-east-1"
BUCKET = "ckpt-test"
ABANDONED_UPLOAD = "fixture/stale/upload.bin"

try:
    import boto3
    from moto.moto_server.werkzeug_app import (DomainDispatcherApplication, MotoRequestHandler,
                                               create_backend_app)
    from moto.server import ThreadedMotoServer
    from werkzeug.serving import make_server
except ImportError as error:
    print(f"SKIPPED: moto is not installed ({error}): run ci/setup.sh (it installs moto[server] "
          "into .deps/venv)")
    sys.exit(77)


def set_up(endpoint):
    """The user, key, policy and bucket; returns the key's id and secret."""
    iam = boto3.client("iam", endpoint_url=endpoint, region_name=REGION)
    iam.create_user(UserName="ckpt")
    key = iam.create_access_key(UserName="ckpt")["AccessKey"]
    # Writes under any ".../denied/..." key are refused (403 AccessDenied): a failure a test can
    # place in the middle of a write.
    policy = {"Version": "2012-10-17",
              "Statement": [{"Effect": "Allow", "Action": "*", "Resource": "*"},
                            {"Effect": "Deny", "Action": "s3:PutObject",
                             "Resource": f"arn:aws:s3:::{BUCKET}/*/denied/*"}]}
    iam.put_user_policy(UserName="ckpt", PolicyName="all", PolicyDocument=json.dumps(policy))
    s3 = boto3.client("s3", endpoint_url=endpoint, region_name=REGION)
    s3.create_bucket(Bucket=BUCKET)
    # A multipart upload a killed writer left open, for the clean-up test to find.
    s3.create_multipart_upload(Bucket=BUCKET, Key=ABANDONED_UPLOAD)
    return key["AccessKeyId"], key["SecretAccessKey"]


def openssl(*args):
    subprocess.run(["openssl", *args], check=True, capture_output=True)


def make_certificates(folder):
    """A CA, a certificate for 127.0.0.1 it signed (with its key), and an unrelated CA: paths."""
    paths = {name: os.path.join(folder, name) for name in
             ("ca.pem", "ca.key", "server.pem", "server.key", "server.csr", "other-ca.pem",
              "other-ca.key", "server.ext")}
    for ca, key, name in (("ca.pem", "ca.key", "ckpt test CA"),
                          ("other-ca.pem", "other-ca.key", "ckpt other CA")):
        openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
                "-nodes", "-days", "1", "-subj", f"/CN={name}", "-keyout", paths[key], "-out",
                paths[ca])
    openssl("req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
            "-subj", "/CN=127.0.0.1", "-keyout", paths["server.key"], "-out", paths["server.csr"])
    with open(paths["server.ext"], "w", encoding="utf-8") as f:
        f.write("subjectAltName = IP:127.0.0.1\n")
    openssl("x509", "-req", "-in", paths["server.csr"], "-CA", paths["ca.pem"], "-CAkey",
            paths["ca.key"], "-CAcreateserial", "-days", "1", "-extfile", paths["server.ext"],
            "-out", paths["server.pem"])
    return paths


def start_tls_server(paths):
    """moto's application over https on a free port of 127.0.0.1; the server and its endpoint."""
    server = make_server("127.0.0.1", 0, DomainDispatcherApplication(create_backend_app),
                         threaded=True, request_handler=MotoRequestHandler,
                         ssl_context=(paths["server.pem"], paths["server.key"]))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"https://127.0.0.1:{server.server_address[1]}"


def tls_environment(folder):
    """With openssl: the https server and the variables that name it; else (None, {})."""
    if shutil.which("openssl") is None:
        return None, {}
    paths = make_certificates(folder)
    server, endpoint = start_tls_server(paths)
    return server, {"CKPT_TEST_S3_TLS_ENDPOINT": endpoint,
                    "CKPT_TEST_S3_CA_FILE": paths["ca.pem"],
                    "CKPT_TEST_S3_OTHER_CA_FILE": paths["other-ca.pem"]}


def main():
    command = sys.argv[1:]
    tls = bool(command) and command[0] == "--tls"
    if tls:
        command = command[1:]
    if not command:
        sys.exit("usage: moto_fixture.py [--tls] COMMAND [ARGS...]")
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    try:
        host, port = server.get_host_and_port()
        endpoint = f"http://{host}:{port}"
        key_id, secret = set_up(endpoint)
        faults_dir = tempfile.TemporaryDirectory(prefix="ckpt-s3-faults-")
        faults = os.path.join(faults_dir.name, "faults")
        proxy, proxy_endpoint = fault_proxy.start(faults, host, port)
        tls_server, tls_env = tls_environment(faults_dir.name) if tls else (None, {})
        env = dict(os.environ, AWS_ACCESS_KEY_ID=key_id, AWS_SECRET_ACCESS_KEY=secret,
                   CKPT_TEST_S3_ENDPOINT=endpoint, CKPT_TEST_S3_BUCKET=BUCKET,
                   CKPT_TEST_S3_REGION=REGION, CKPT_TEST_S3_PROXY=proxy_endpoint,
                   CKPT_TEST_S3_FAULTS=faults, **tls_env)
        env.pop("INITIAL_NO_AUTH_ACTION_COUNT")
        env.pop("AWS_SESSION_TOKEN", None)
        try:
            return subprocess.run(command, env=env, check=False).returncode
        finally:
            proxy.shutdown()
            if tls_server is not None:
                tls_server.shutdown()
            faults_dir.cleanup()
    finally:
        server.stop()


if __name__ == "__main__":
    sys.exit(main())
