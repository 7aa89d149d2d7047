import type { Dataset } from '../catalog/catalog.js';

/**
 * Serialised JSON pages keyed by request URL, each valid for one answer version: its dataset's
 * version, and for an adjusted answer its factor dataset's too (QueryService.answerVersion). A
 * version changes exactly when a batch changes the dataset's rows, and is read from the database
 * on every request, so an entry is never served after a change, whichever process or instance
 * applied the batch. A URL is stored on its second request within one version, so one-off
 * random pages do not churn the cache; a polled URL is answered without touching the rows.
 */
export interface CachedPage {
  /** QueryService.answerVersion's key when the page was made. */
  version: string;
  /** The factor dataset an adjusted answer also depends on (null: none). */
  factors: Dataset | null;
  etag: string;
  /** Absent: "private, no-cache". */
  cacheControl?: string;
  /** UTF-8 bytes: written to the socket as they are, with no encoding per response. */
  body: Buffer;
}

const MAX_BYTES = 32 * 1024 * 1024;
const MAX_ENTRY_BYTES = 1024 * 1024;
const MAX_SEEN = 20_000;

export class ResponseCache {
  private readonly pages = new Map<string, CachedPage>();
  private readonly seen = new Map<string, string>();
  private bytes = 0;

  /** The entry for this URL, which the caller must still check against the current version. */
  get(url: string): CachedPage | undefined {
    return this.pages.get(url);
  }

  /** True when the URL was asked for before in this version: worth serialising for the cache. */
  admit(url: string, version: string): boolean {
    if (this.seen.get(url) === version) return true;
    if (this.seen.size >= MAX_SEEN) this.seen.clear();
    this.seen.set(url, version);
    return false;
  }

  set(url: string, page: CachedPage): void {
    const size = page.body.byteLength + url.length;
    if (size > MAX_ENTRY_BYTES) return;
    this.delete(url);
    // Oldest entries out first (Map keeps insertion order).
    for (const [k] of this.pages) {
      if (this.bytes + size <= MAX_BYTES) break;
      this.delete(k);
    }
    this.pages.set(url, page);
    this.bytes += size;
  }

  private delete(url: string): void {
    const old = this.pages.get(url);
    if (!old) return;
    this.pages.delete(url);
    this.bytes -= old.body.byteLength + url.length;
  }
}
