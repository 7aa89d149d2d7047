import { AppError } from '../errors.js';

/**
 * The `as_of` retention horizon (MDS_REVISIONS_KEEP_DAYS): retention removes revisions that
 * ended before it, so any as_of at or after it is answered exactly, and one before it is refused.
 */
export class AsOfHorizon {
  constructor(
    private readonly keepDays: number | undefined,
    private readonly now: () => number = Date.now,
  ) {}

  /** The earliest instant whose revisions are all kept (null: all are kept). */
  horizon(): string | null {
    if (this.keepDays === undefined) return null;
    return new Date(this.now() - this.keepDays * 86_400_000).toISOString();
  }

  /** 400 / 4005 naming the horizon when `at` is before it. */
  check(at: string): void {
    const horizon = this.horizon();
    if (horizon !== null && at < horizon) {
      throw new AppError(
        4005,
        `as_of ${at} is earlier than the retention horizon ${horizon} (MDS_REVISIONS_KEEP_DAYS=${this.keepDays})`,
        { extra: { parameter: 'as_of', horizon } },
      );
    }
  }
}
