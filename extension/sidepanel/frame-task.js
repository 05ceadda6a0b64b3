// One piece of work run at the next frame, however often it is asked for before then (live
// items arriving together cost one layout). A hidden page gets no frames, so there it runs on a
// task instead (and is up to date when shown).

export class FrameTask {
  /** @param {() => void} run */
  constructor(run) {
    this.run = run;
    this.pending = null;
  }

  schedule() {
    if (this.pending) return;
    const run = () => {
      this.pending = null;
      this.run();
    };
    if (document.visibilityState === "hidden") {
      const t = setTimeout(run, 0);
      this.pending = { cancel: () => clearTimeout(t) };
    } else {
      const f = requestAnimationFrame(run);
      this.pending = { cancel: () => cancelAnimationFrame(f) };
    }
  }

  /** Not needed any more (the work was done now). */
  cancel() {
    this.pending?.cancel();
    this.pending = null;
  }
}
