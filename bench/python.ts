import { execFile, execFileSync } from 'node:child_process';
import { promisify } from 'node:util';

/** Python for the columnar phase: `MDS_PYTHON` (a venv with pandas and pyarrow), else python3. */
export const PYTHON = process.env.MDS_PYTHON ?? 'python3';

export function pythonHasAll(modules: readonly string[]): boolean {
  try {
    execFileSync(PYTHON, ['-c', modules.map((m) => `import ${m}`).join('; ')], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

export async function runPython(args: string[]): Promise<string> {
  const { stdout } = await promisify(execFile)(PYTHON, args, { maxBuffer: 64 * 1024 * 1024 });
  return stdout;
}
