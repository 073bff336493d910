"""A throwaway PostgreSQL cluster for the Python suites and benchmarks (the Swift tests have
RxTestSupport/PostgresServer). Used by Benchmarks/postgres_bench.py and
Tests/Reliability/reliability.py (the tamper matrix against a database)."""
import glob, os, pwd, shutil, socket, subprocess, tempfile


class ClusterError(Exception):
    """The cluster could not be made or used (what failed, with the program's stderr)."""


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


class Cluster:
    """A PostgreSQL cluster of its own, as the Swift tests start one (RxTestSupport/PostgresServer):
    initdb as the postgres user (when run as root) into a temporary folder, scram passwords, a free
    port on 127.0.0.1, fsync on. `rx` (password `password`) owns the database `url` names;
    `database()` makes another. `stop()` stops it and removes the folder."""

    def __init__(self, database="rxbench"):
        bins = sorted(glob.glob("/usr/lib/postgresql/*/bin"))
        if not bins:
            raise ClusterError("no /usr/lib/postgresql/*/bin (apt-get install postgresql)")
        self.bin = bins[-1]
        self.folder = tempfile.mkdtemp(prefix="rxvault-pycluster-")
        self.data = os.path.join(self.folder, "data")
        self.as_postgres = []
        self.port = free_port()
        self.superpassword = "superuser " + os.urandom(8).hex()
        self.password = "owner " + os.urandom(8).hex()
        try:
            self._start(database)
        except BaseException:
            self.stop()  # nothing left behind by a cluster that did not start
            raise

    def _start(self, database):
        if os.geteuid() == 0:
            try:
                user = pwd.getpwnam("postgres")
            except KeyError:
                raise ClusterError("run as root, and there is no postgres user to run PostgreSQL as") from None
            os.chown(self.folder, user.pw_uid, user.pw_gid)
            self.as_postgres = ["runuser", "-u", "postgres", "--"]
        pwfile = os.path.join(self.folder, "pw")
        with open(pwfile, "w") as f:
            f.write(self.superpassword + "\n")
        if self.as_postgres:
            os.chown(pwfile, pwd.getpwnam("postgres").pw_uid, -1)
        self.call([f"{self.bin}/initdb", "-D", self.data, "-U", "postgres", "-A", "scram-sha-256", f"--pwfile={pwfile}",
                   "-E", "UTF8", "--no-sync"])
        self.call([f"{self.bin}/pg_ctl", "-D", self.data, "-l", os.path.join(self.folder, "log"), "-w", "-o",
                   f"-c listen_addresses=127.0.0.1 -p {self.port} -k {self.folder}", "start"])
        self.psql("CREATE ROLE rx LOGIN PASSWORD '%s'" % self.password)
        self.url = self.database(database)

    def database(self, name):
        """A new, empty database owned by rx; its URL (no password: that is `password`)."""
        self.psql(f"CREATE DATABASE {name} OWNER rx")
        return f"postgres://rx@127.0.0.1:{self.port}/{name}"

    def call(self, args):
        done = subprocess.run(self.as_postgres + args, capture_output=True, text=True, cwd="/")
        if done.returncode != 0:
            raise ClusterError(f"{os.path.basename(args[0])} failed: {done.stderr.strip()[:800]}")

    def psql(self, sql):
        env = dict(os.environ, PGPASSWORD=self.superpassword)
        done = subprocess.run([f"{self.bin}/psql", "-X", "-q", "-h", "127.0.0.1", "-p", str(self.port), "-U", "postgres",
                               "-d", "postgres", "-v", "ON_ERROR_STOP=1", "-c", sql], env=env, capture_output=True, text=True)
        if done.returncode != 0:
            raise ClusterError(f"psql failed: {done.stderr.strip()}")

    def pids(self):
        """This cluster's postmaster and its children (backends, writer, WAL): not another
        cluster's, such as the one Debian starts when it installs postgresql."""
        try:
            postmaster = int(open(os.path.join(self.data, "postmaster.pid")).readline())
        except (OSError, ValueError):
            return []
        found = [postmaster]
        for stat in glob.glob("/proc/[0-9]*/stat"):
            try:
                if int(open(stat).read().rsplit(")", 1)[1].split()[1]) == postmaster:
                    found.append(int(stat.split("/")[2]))
            except (OSError, ValueError, IndexError):
                continue
        return found

    def stop(self):
        subprocess.run(self.as_postgres + [f"{self.bin}/pg_ctl", "-D", self.data, "-m", "fast", "-w", "stop"],
                       capture_output=True, cwd="/")
        shutil.rmtree(self.folder, ignore_errors=True)
