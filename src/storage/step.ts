/**
 * A step of a storage algorithm written once for both backends: a generator that yields the
 * promises it waits on. better-sqlite3 answers synchronously, so SQLite runs a step to its end
 * without yielding to the event loop (a batch transaction cannot interleave with other requests
 * of the process); PostgreSQL awaits each yielded promise. Compose steps with `yield*`.
 */
export type Step<T> = Generator<Promise<unknown>, T, unknown>;

/** A step that waits on one promise (PostgreSQL). */
export function* wait<T>(p: Promise<T>): Step<T> {
  return (yield p) as T;
}

/** A step whose value is already known (SQLite). */
// eslint-disable-next-line require-yield
export function* now<T>(value: T): Step<T> {
  return value;
}

/** Runs a step that never waits (SQLite); a yielded promise is a programming error. */
export function runSync<T>(step: Step<T>): T {
  const r = step.next();
  if (!r.done) {
    void r.value.catch(() => {});
    throw new Error('a synchronous store step waited on a promise');
  }
  return r.value;
}

/** Runs a step, awaiting what it yields; a rejection is thrown into it (its finally blocks run). */
export async function runAsync<T>(step: Step<T>): Promise<T> {
  let r = step.next();
  while (!r.done) {
    let value: unknown;
    try {
      value = await r.value;
    } catch (err) {
      r = step.throw(err);
      continue;
    }
    r = step.next(value);
  }
  return r.value;
}
