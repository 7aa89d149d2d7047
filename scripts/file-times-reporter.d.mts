// The type of file-times-reporter.mjs (plain JavaScript: node loads reporters before tsx applies).
import type { TestEvent } from 'node:test/reporters';

export default function fileTimes(source: AsyncIterable<TestEvent>): AsyncGenerator<string>;
