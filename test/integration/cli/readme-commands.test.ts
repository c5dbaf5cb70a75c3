// The README's commands as a new user types them, in a fresh copy of the repository: `npm ci` (which builds
// dist/ through the `prepare` script), then `npx tessera ...`. A copy holds only what git would commit (tracked
// and not-ignored files), so anything that works here only because of a local build or install shows up.
import { execFile, execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const projectRoot = path.resolve(import.meta.dirname, '../../..');
const { version } = JSON.parse(readFileSync(path.join(projectRoot, 'package.json'), 'utf8')) as {
  version: string;
};
let clone: string;

/** The environment of a user's shell: nothing inherited from the `npm test` that runs this file. */
function userEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (!/^npm_/i.test(key) && key !== 'INIT_CWD') env[key] = value;
  }
  return env;
}

function run(command: string, args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      command,
      args,
      { cwd: clone, env: userEnv(), encoding: 'utf8', maxBuffer: 16 * 1024 * 1024 },
      (err, stdout, stderr) => {
        const code = err === null ? 0 : typeof err.code === 'number' ? err.code : 1;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

beforeAll(async () => {
  clone = mkdtempSync(path.join(os.tmpdir(), 'tessera-fresh-clone-'));
  const files = execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], {
    cwd: projectRoot,
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  })
    .split('\0')
    .filter((f) => f !== '' && existsSync(path.join(projectRoot, f)));
  for (const file of files) {
    mkdirSync(path.dirname(path.join(clone, file)), { recursive: true });
    cpSync(path.join(projectRoot, file), path.join(clone, file));
  }
  expect(existsSync(path.join(clone, 'node_modules'))).toBe(false);
  expect(existsSync(path.join(clone, 'dist'))).toBe(false);
  // Packages come from npm's cache when it has them (CI ran `npm ci` before); the install itself is real.
  const ci = await run('npm', ['ci', '--prefer-offline', '--no-audit', '--no-fund']);
  expect(ci.code, `npm ci failed:\n${ci.stdout}\n${ci.stderr}`).toBe(0);
}, 900_000);

afterAll(() => {
  if (clone) rmSync(clone, { recursive: true, force: true });
});

describe('the README quick start in a fresh clone', () => {
  it('`npm ci` builds the CLI, and `npx tessera --version` prints the package version', async () => {
    expect(existsSync(path.join(clone, 'dist', 'cli', 'main.js'))).toBe(true);
    const result = await run('npx', ['tessera', '--version']);
    expect(result.stderr).not.toContain('not found');
    expect(result.code).toBe(0);
    expect(result.stdout.trim()).toBe(version);
  });

  it('`npx tessera --help` lists the documented commands', async () => {
    const result = await run('npx', ['tessera', '--help']);
    expect(result.code).toBe(0);
    for (const command of ['start', 'dev', 'image', 'podplacement', 'upgrade', 'nodepool'])
      expect(result.stdout).toMatch(new RegExp(`^\\s+${command}\\b`, 'm'));
  });

  it('links node_modules/.bin/tessera, so npx finds the project itself even with a stale npx cache', async () => {
    const bin = path.join(clone, 'node_modules', '.bin', 'tessera');
    expect(existsSync(bin)).toBe(true);
    const result = await run(bin, ['--version']);
    expect(result.stdout.trim()).toBe(version);
  });
});
