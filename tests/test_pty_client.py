"""The tests' own pty client (conftest.PtyClient): closed, it has let go of its terminal for
good. Its reader thread once outlived close(), which closed the fd under it: the number went
to the next pipe a test opened (a CLI's stdout) and the thread read that pipe, taking the
command's output (test_remote_view failed ~1 run in 10: `list --json` printed nothing)."""
import os
import time

from conftest import PtyClient


def test_a_closed_pty_client_reads_no_file_that_takes_its_fd_number(tmux_server):
    client = PtyClient(tmux_server)
    client.close()
    assert not client._reader.is_alive()  # it closed the fd itself, after its last read
    r, w = os.pipe()  # the lowest free numbers: the pty's among them
    try:
        os.write(w, b"mine\n")
        time.sleep(0.6)  # three of the reader's select rounds, were it still there
        assert os.read(r, 100) == b"mine\n"
    finally:
        os.close(r)
        os.close(w)
