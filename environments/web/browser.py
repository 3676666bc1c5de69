"""One headless Chromium per worker process, with the means to notice that it died or hung and to replace it.

`BrowserHost` launches Debian's Chromium through Playwright (sync API) lazily, knows the browser's process id
(found among this process's descendants, since Playwright does not expose it), and offers:

- `watchdog(seconds)`: a context manager that SIGKILLs the browser if the block has not finished in time. A
  Playwright call blocked on a hung renderer (an `evaluate` has no timeout of its own) then fails at once with
  a "closed" error, which the environment reports as an infrastructure failure.
- `alive()`, `kill()`, `relaunch()`, `close()`.
- `pin(cpus)`: keep the calling thread, the Playwright driver and the browser's whole process tree (every thread
  of the browser, its zygotes, renderers and helpers) on the given CPU cores, now and after every relaunch. Left
  free, one worker's Chromium spreads a step's work over every core and spends far more CPU doing it, so rollout
  workers that each pin to a core of their own add up where free ones do not (numbers in docs/architecture.md,
  from `bench/env_throughput.py`).

Hosts of one thread share that thread's Playwright driver (the sync API allows one per thread).

`shared_browser()` is the calling thread's host; every `BrowserEnv` of a thread uses it (one browser per
thread, a fresh context per episode). Playwright's sync objects belong to the thread that made them, so a
process-wide browser could not serve the RL core's `EpisodeRunner`, which steps each environment of a rollout
worker on its own thread: one worker with N environments runs N browsers.
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
from collections.abc import Iterable, Iterator
from typing import Any

import psutil
from playwright.sync_api import Browser, Playwright, sync_playwright

CHROMIUM = os.environ.get("RAYGENT_CHROMIUM", "/usr/bin/chromium")
"""The Chromium binary: `RAYGENT_CHROMIUM` (the cluster image sets it to Playwright's Chromium), else Debian's."""
SAFE_ARGS: tuple[str, ...] = (
    "--no-sandbox",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
    "--dns-prefetch-disable",
    # Defense in depth under the sandbox's request routing: non-loopback traffic goes to a dead proxy and no
    # host name but the loopback ones resolves (Chromium never proxies loopback itself).
    "--proxy-server=http://127.0.0.1:9",
    "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1 , EXCLUDE localhost",
    "--force-webrtc-ip-handling-policy=disable_non_proxied_udp",
)
LAUNCH_TIMEOUT_S = 60.0


class BrowserHost:
    """A lazily launched Chromium that can be killed and relaunched (see the module docstring)."""

    def __init__(self, executable: str = CHROMIUM, args: tuple[str, ...] = SAFE_ARGS, headless: bool = True) -> None:
        self.executable = executable
        self.args = args
        self.headless = headless
        self.launches = 0
        """How many browsers this host has launched (1 + relaunches)."""
        self.cpus: frozenset[int] | None = None
        """The cores the browser's processes are held to (None: any; see `pin`)."""
        self._playwright: Playwright | None = None
        self._browser: Browser | None = None
        self._pid: int | None = None

    @property
    def browser(self) -> Browser:
        """The running browser, launched on first use (or after a crash)."""
        if self._browser is None or not self.alive():
            self.relaunch()
        assert self._browser is not None
        return self._browser

    @property
    def pid(self) -> int | None:
        """The Chromium browser process id (None before launch)."""
        return self._pid

    def alive(self) -> bool:
        """Whether the browser is connected and its process runs."""
        return self._browser is not None and self.alive_after(self._browser)

    def relaunch(self) -> Browser:
        """Close whatever is left of the current browser and launch a new one."""
        self._discard()
        if self._playwright is None:
            self._playwright = _playwright()
        before = {p.pid for p in _browser_processes()}
        self._browser = self._playwright.chromium.launch(
            executable_path=self.executable,
            args=list(self.args),
            headless=self.headless,
            timeout=LAUNCH_TIMEOUT_S * 1000,
        )
        self.launches += 1
        self._pid = _browser_pid(self._browser, before)
        self._apply_pin(passes=2)  # a second pass catches a helper started while the first one ran
        return self._browser

    def pin(self, cpus: Iterable[int] | None) -> None:
        """Hold the calling thread, the thread's Playwright driver and the browser's process tree to the cores
        `cpus` (None: leave them as they are), now and at every relaunch. Call it before each episode: Chromium
        starts the GPU process's SwiftShader worker threads at the first paint and pins them to cores of its
        own choosing, so each call walks the tree again (about 120 threads, ~10 ms)."""
        if cpus is None:
            return
        wanted = frozenset(cpus)
        cores = range(os.cpu_count() or 1)
        if not wanted or not wanted <= set(cores):
            raise ValueError(f"cpus must be a non-empty subset of the machine's cores {cores}, got {cpus}")
        previous, self.cpus = self.cpus, wanted
        try:
            self._apply_pin(passes=1)
        except OSError as error:  # the kernel refuses the mask (cores outside this container's cpuset)
            self.cpus = previous
            raise ValueError(f"cannot pin to cores {sorted(wanted)}: {error}") from error

    def _apply_pin(self, passes: int) -> None:
        if self.cpus is None:
            return
        os.sched_setaffinity(0, self.cpus)  # on Linux, pid 0 is the calling thread, not the whole process
        if self._pid is not None:
            with contextlib.suppress(psutil.NoSuchProcess):
                # the driver, its browsers and their helpers
                pin_tree(psutil.Process(self._pid).ppid(), self.cpus, passes)

    def kill(self) -> None:
        """SIGKILL the browser process and its children (safe from any thread)."""
        pid = self._pid
        if pid is None:
            return
        try:
            root = psutil.Process(pid)
            victims = [*root.children(recursive=True), root]
        except psutil.NoSuchProcess:
            return
        for process in victims:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(process.pid, signal.SIGKILL)

    @contextlib.contextmanager
    def watchdog(self, seconds: float) -> Iterator[None]:
        """Kill the browser if the block runs longer than `seconds`; re-raises what the block raises."""
        fired = threading.Event()

        def expire() -> None:
            fired.set()
            self.kill()

        timer = threading.Timer(seconds, expire)
        timer.daemon = True
        timer.start()
        try:
            yield
        finally:
            timer.cancel()
            if fired.is_set():
                raise BrowserHung(f"a browser call did not finish within {seconds:.0f} s; the browser was killed")

    def close(self) -> None:
        """Close the browser (Playwright itself stays up for the thread's other hosts)."""
        self._discard()
        self._playwright = None

    def _discard(self) -> None:
        browser, self._browser = self._browser, None
        if browser is not None and not self.alive_after(browser):
            self.kill()  # a dead or hung browser would make close() wait
        if browser is not None:
            with contextlib.suppress(Exception):
                browser.close()
        self.kill()
        self._pid = None

    def alive_after(self, browser: Browser) -> bool:
        """Whether `browser` is connected and (when its pid is known) its process runs."""
        try:
            running = self._pid is None or psutil.Process(self._pid).status() != psutil.STATUS_ZOMBIE
        except psutil.NoSuchProcess:
            running = False
        return running and browser.is_connected()


class BrowserHung(RuntimeError):
    """A browser call exceeded its watchdog deadline (the browser has been killed)."""


def _browser_pid(browser: Browser, before: set[int]) -> int | None:
    """The browser process's id, as Chromium reports it over CDP (`SystemInfo.getProcessInfo`); where that fails,
    the one Chromium browser process that was not running `before` the launch (None if not exactly one). Diffing
    the process list alone can miss: under load another thread's launch, or a helper whose command line cannot be
    read yet, makes the count differ from one."""
    with contextlib.suppress(Exception):
        session = browser.new_browser_cdp_session()
        try:
            processes = session.send("SystemInfo.getProcessInfo")["processInfo"]
        finally:
            session.detach()
        return next(int(p["id"]) for p in processes if p["type"] == "browser")
    started = [p for p in _browser_processes() if p.pid not in before]
    return started[0].pid if len(started) == 1 else None


def _browser_processes() -> list[Any]:
    """This process's descendant Chromium browser processes: the main process of each launched browser
    (Playwright drives it over `--remote-debugging-pipe`; its helpers carry a `--type=` flag)."""
    found = []
    for process in psutil.Process().children(recursive=True):
        with contextlib.suppress(psutil.Error):
            cmdline = process.cmdline()
            if "--remote-debugging-pipe" in cmdline and not any(arg.startswith("--type=") for arg in cmdline):
                found.append(process)
    return found


def pin_tree(pid: int, cpus: frozenset[int], passes: int = 1) -> int:
    """Set the CPU affinity of every thread of process `pid` and of its descendants, `passes` times over; returns
    how many threads were set.

    Linux keeps an affinity per thread, and a new thread or process takes its creator's, so once every thread of
    the tree is pinned, whatever the browser starts later (a renderer for each new context) is pinned too, unless
    it sets an affinity of its own."""
    pinned: set[int] = set()
    for _ in range(passes):
        try:
            root = psutil.Process(pid)
            processes = [root, *root.children(recursive=True)]
        except psutil.NoSuchProcess:
            break
        for process in processes:
            with contextlib.suppress(psutil.Error):
                for thread in process.threads():
                    with contextlib.suppress(OSError):  # the thread ended meanwhile
                        os.sched_setaffinity(thread.id, cpus)
                        pinned.add(thread.id)
    return len(pinned)


_PLAYWRIGHT = threading.local()


def _playwright() -> Playwright:
    """The thread's Playwright driver (its sync API allows one per thread), started on first use."""
    if getattr(_PLAYWRIGHT, "driver", None) is None:
        _PLAYWRIGHT.driver = sync_playwright().start()
    driver: Playwright = _PLAYWRIGHT.driver
    return driver


_SHARED = threading.local()


def shared_browser() -> BrowserHost:
    """The calling thread's `BrowserHost` (the browser itself launches on first use)."""
    host: BrowserHost | None = getattr(_SHARED, "host", None)
    if host is None:
        host = _SHARED.host = BrowserHost()
    return host
