/**
 * Whether the service may answer: not before the database is migrated and reachable, not once
 * shutdown has begun. Latched open on the first yes, so an open service pays one test per request.
 */
export class Readiness {
  private marked = false;
  private latched = false;
  private closing = false;

  /** `probe` is asked until it says yes (tests flip it); markReady() says yes for good. */
  constructor(private readonly probe: () => boolean = () => false) {}

  markReady(): void {
    this.marked = true;
  }

  /** Shutdown has begun: every later request is sent elsewhere. */
  startClosing(): void {
    this.closing = true;
    this.latched = false;
  }

  get isClosing(): boolean {
    return this.closing;
  }

  /** Ready now (not latched): /health asks this on every call. */
  isReady(): boolean {
    return this.marked || this.probe();
  }

  /** True once ready and until closing; the per-request check. */
  isOpen(): boolean {
    if (this.latched) return true;
    if (this.closing || !this.isReady()) return false;
    this.latched = true;
    return true;
  }
}
