import fs from 'node:fs';
import os from 'node:os';

/** The scheduler's lowest priority (highest nice value). */
const NICE_MAX = 19;

export interface PriorityOutcome {
  /** The thread's id where threads have their own (Linux), else null. */
  tid: number | null;
  /** The thread's nice value once lowered; null when it was left as it was. */
  nice: number | null;
  /** Why it was left as it was. */
  reason?: string;
}

/** This thread's id: /proc/thread-self links to `<pid>/task/<tid>` (Linux only). */
function threadId(): number | null {
  try {
    const tid = Number(/\/task\/(\d+)$/.exec(fs.readlinkSync('/proc/thread-self'))?.[1]);
    return Number.isInteger(tid) && tid > 0 ? tid : null;
  } catch {
    return null;
  }
}

/**
 * Lowers the calling thread's scheduling priority by `increment` nice steps, leaving the
 * process's other threads as they are. On Linux a thread is its own scheduling entity with its
 * own nice value, and setpriority on its id changes that thread alone. Elsewhere there is no
 * per-thread nice: nothing is done. Raising a nice value needs no privilege.
 */
export function lowerThreadPriority(increment: number): PriorityOutcome {
  const tid = threadId();
  if (tid === null) return { tid, nice: null, reason: 'no per-thread priority on this system' };
  if (increment <= 0) return { tid, nice: null, reason: 'increment 0' };
  try {
    // From the thread's current value: under `nice -n 5 npm start` the ingest threads get 5 + N.
    const nice = Math.min(NICE_MAX, os.getPriority(tid) + increment);
    os.setPriority(tid, nice);
    return { tid, nice };
  } catch (err) {
    return { tid, nice: null, reason: (err as Error).message };
  }
}
