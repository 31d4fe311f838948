// The server's clock as seen from the page. Every server timestamp that reaches us
// (a view's server_time, a heartbeat, a move's `at`) is a lower bound of the server's
// time at arrival, so the largest recent offset is the best estimate. The page clock
// used is the monotonic performance.now(), so changes to the computer's clock do not
// move the timer.

export class ServerClock {
  constructor() {
    this.samples = [];
    this.offset = null;
  }

  sample(serverMs) {
    if (!Number.isFinite(serverMs)) return;
    this.samples.push(serverMs - performance.now());
    if (this.samples.length > 16) this.samples.shift();
    this.offset = Math.max(...this.samples);
  }

  sampleText(timestamp) {
    if (timestamp) this.sample(Date.parse(timestamp));
  }

  now() {
    return this.offset == null ? Date.now() : performance.now() + this.offset;
  }
}
