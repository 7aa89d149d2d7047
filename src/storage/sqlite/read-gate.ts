import type Database from 'better-sqlite3';
import { openDatabase } from './open-database.js';

/** The code of the error a read gets while a change is being made visible (SqliteDb retries it). */
export const GATE_HELD = 'SQLITE_BUSY_GATE';

/** ms a writer waits for reads passing the gate (each holds it a few µs) before giving up. */
const HOLD_WAIT_MS = 5000;

const pause = new Int32Array(new SharedArrayBuffer(4));

/**
 * The read gate (docs/point-in-time.md, "When a change is known"): a change's known instant is
 * read inside its transaction, before its COMMIT, so without more a read starting between that
 * instant and the end of the COMMIT (the WAL's fsync: median 10 ms, p99 40 ms) would still see
 * the old rows while `as_of` at its instant answers the new ones. Every connection of every
 * process on the database file (request threads, ingest threads, reader processes) opens the
 * same side file `<db>-gate`, kept in rollback-journal mode so that its locks are plain file
 * locks: the transaction that publishes a change takes it exclusively just before reading that
 * instant and drops it after COMMIT; a read takes it shared while its snapshot is taken and
 * drops it at once. So a read either took its snapshot before the change's instant was read or
 * waits for the COMMIT and sees the change: it answers `as_of` at the instant it passed the
 * gate. The locks are fcntl locks: a process killed while holding one (a reader at its
 * deadline) loses it with its file descriptors, so nothing can stay locked. Nothing is ever
 * written to the file.
 */
export class ReadGate {
  private readonly db: Database.Database;
  private readonly statements = new Map<string, Database.Statement>();
  /** Date.now() when this connection took the gate exclusively; 0: not held. */
  private heldAt = 0;

  constructor(file: string) {
    this.db = openDatabase(`${file}-gate`);
    this.db.pragma('busy_timeout = 0');
  }

  /**
   * Prepared when first run, inside the caller's retry: preparing reads the file's schema, which
   * takes the shared lock, so it fails while a writer holds the gate (a reader process started
   * then must not die of it).
   */
  private run(text: string): void {
    let s = this.statements.get(text);
    if (!s) {
      s = this.db.prepare(text);
      this.statements.set(text, s);
    }
    if (s.reader) s.get();
    else s.run();
  }

  /**
   * Takes the gate shared; false (nothing held) while a change is being made visible. Give it
   * back with leave() once the read's snapshot is taken.
   */
  tryEnter(): boolean {
    try {
      this.run('BEGIN');
      // Reading the file is what takes the shared lock (an empty file has a header to read).
      this.run('SELECT 1 FROM sqlite_schema LIMIT 1');
      return true;
    } catch (err) {
      if (this.db.inTransaction) this.run('COMMIT');
      if ((err as { code?: unknown }).code === 'SQLITE_BUSY') return false;
      throw err;
    }
  }

  leave(): void {
    if (this.db.inTransaction) this.run('COMMIT');
  }

  /**
   * Holds reads back (exclusive), waiting for those passing the gate; returns when it was taken,
   * once the clock has left that millisecond (at most 1 ms): an instant read after this is
   * later than that of any read that passed the gate before it. The caller reads its own clock
   * (publish), so an injected clock (tests) is not overridden by this one.
   */
  hold(): number {
    if (this.heldAt > 0) return this.heldAt;
    const until = Date.now() + HOLD_WAIT_MS;
    for (;;) {
      try {
        this.run('BEGIN EXCLUSIVE');
        break;
      } catch (err) {
        if ((err as { code?: unknown }).code !== 'SQLITE_BUSY' || Date.now() >= until) throw err;
        // Reads hold it shared for a few µs: a short pause, not SQLite's growing sleeps.
        Atomics.wait(pause, 0, 0, 0.2);
      }
    }
    this.heldAt = Date.now();
    while (Date.now() <= this.heldAt) Atomics.wait(pause, 0, 0, 0.2);
    return this.heldAt;
  }

  /**
   * Lets reads through again (after COMMIT or ROLLBACK). Not within the millisecond it was
   * taken: a read that passed the gate in that millisecond must name an instant earlier than the
   * change's (which is later than it, publish), and one after it an instant not earlier.
   */
  release(): void {
    if (this.heldAt === 0) return;
    while (Date.now() <= this.heldAt) Atomics.wait(pause, 0, 0, 0.2);
    this.heldAt = 0;
    this.run('COMMIT');
  }

  close(): void {
    if (this.db.open) this.db.close();
  }
}
