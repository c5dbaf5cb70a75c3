import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  APT_INSTALL_ARGS,
  ensureSystemTools,
  hasCommand,
  installCommand,
  planSystemTools,
  SYSTEM_TOOLS,
  type SystemProbe,
  type SystemTool,
} from './system-tools.js';

const TOOLS: readonly SystemTool[] = [
  { command: 'podman', debianPackage: 'podman', neededBy: 'the container tests' },
  { command: 'dpkg-deb', debianPackage: 'dpkg', neededBy: 'the image build' },
  { command: 'chromium', debianPackage: 'chromium', neededBy: 'the dashboard browser test' },
];

/** A machine that has the commands `installed` holds (a list the fake apt-get adds to). */
function machine(installed: string[], opts: { isRoot: boolean; hasApt?: boolean }): SystemProbe {
  return { has: (c) => installed.includes(c), isRoot: opts.isRoot, hasApt: opts.hasApt ?? true };
}

describe('planSystemTools', () => {
  it('does nothing when every tool is there, as root or not', () => {
    const all = TOOLS.map((t) => t.command);
    expect(planSystemTools(TOOLS, machine(all, { isRoot: true }))).toEqual({ kind: 'ready' });
    expect(planSystemTools(TOOLS, machine(all, { isRoot: false }))).toEqual({ kind: 'ready' });
  });

  it('as root with apt-get, installs the packages of the missing tools only', () => {
    const plan = planSystemTools(TOOLS, machine(['podman'], { isRoot: true }));
    expect(plan).toEqual({ kind: 'install', missing: [TOOLS[1], TOOLS[2]], packages: ['dpkg', 'chromium'] });
  });

  it('names each package once when two tools share it', () => {
    const tools = [...TOOLS, { command: 'dpkg-query', debianPackage: 'dpkg', neededBy: 'x' }];
    const plan = planSystemTools(tools, machine(['podman', 'chromium'], { isRoot: true }));
    expect(plan.kind === 'install' && plan.packages).toEqual(['dpkg']);
  });

  it('without root, refuses at once with what is missing, why, and the exact command', () => {
    const plan = planSystemTools(TOOLS, machine(['dpkg-deb'], { isRoot: false }));
    expect(plan.kind).toBe('refuse');
    expect(plan.kind === 'refuse' && plan.message).toBe(
      'the tests need tools that are not installed:\n' +
        '  podman (Debian package podman): the container tests\n' +
        '  chromium (Debian package chromium): the dashboard browser test\n' +
        'Install them as root, then run the tests again:\n' +
        "  sudo sh -c 'apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends podman chromium'\n" +
        '(As root, `npm test` installs what is missing by itself.)',
    );
  });

  it('without apt-get, even as root, names the Debian packages for another package manager', () => {
    const plan = planSystemTools(TOOLS, machine(['podman', 'dpkg-deb'], { isRoot: true, hasApt: false }));
    expect(plan.kind === 'refuse' && plan.message).toBe(
      'the tests need a tool that is not installed:\n' +
        '  chromium (Debian package chromium): the dashboard browser test\n' +
        "This machine has no apt-get: install it with its own package manager (Debian's package names: chromium), " +
        'then run the tests again.',
    );
  });

  it("lists each command once, with a package and a reason (the project's list)", () => {
    const commands = SYSTEM_TOOLS.map((t) => t.command);
    expect(new Set(commands).size).toBe(commands.length);
    expect(commands).toEqual(expect.arrayContaining(['podman', 'runc', 'chromium']));
    for (const tool of SYSTEM_TOOLS) {
      expect(tool.debianPackage).toMatch(/^[a-z0-9][a-z0-9+.-]+$/);
      expect(tool.neededBy).not.toBe('');
    }
  });
});

describe('ensureSystemTools', () => {
  /** A fake apt-get that fails `install` until `update` ran when `stale`; installing adds the packages' tools. */
  function fakeApt(installed: string[], stale: boolean) {
    const calls: string[] = [];
    let updated = !stale;
    const apt = (args: readonly string[]): Promise<number> => {
      calls.push(args.join(' '));
      if (args[0] === 'update') {
        updated = true;
        return Promise.resolve(0);
      }
      if (!updated) return Promise.resolve(100);
      for (const tool of TOOLS) if (args.includes(tool.debianPackage)) installed.push(tool.command);
      return Promise.resolve(0);
    };
    return { apt, calls };
  }

  it('as root installs what is missing, refreshing the package lists once when the install fails', async () => {
    const installed = ['podman'];
    const { apt, calls } = fakeApt(installed, true);
    const lines: string[] = [];
    await ensureSystemTools({
      tools: TOOLS,
      probe: machine(installed, { isRoot: true }),
      apt,
      log: (l) => lines.push(l),
      logFile: path.join(mkdtempSync(path.join(os.tmpdir(), 'system-tools-')), 'apt.log'),
    });
    const install = [...APT_INSTALL_ARGS, 'dpkg', 'chromium'].join(' ');
    expect(calls).toEqual([install, 'update', install]);
    expect(installed).toEqual(['podman', 'dpkg-deb', 'chromium']);
    expect(lines[0]).toMatch(/^installing dpkg chromium from Debian's packages for dpkg-deb, chromium; /);
    expect(lines[1]).toContain('refreshing the package lists');
    expect(lines[2]).toMatch(/^installed dpkg chromium in \d+ s$/);
  });

  it('installs nothing when nothing is missing', async () => {
    const { apt, calls } = fakeApt([], false);
    await ensureSystemTools({
      tools: TOOLS,
      probe: machine(['podman', 'dpkg-deb', 'chromium'], { isRoot: true }),
      apt,
    });
    expect(calls).toEqual([]);
  });

  it('without root fails at once, running nothing', async () => {
    const { apt, calls } = fakeApt([], false);
    await expect(
      ensureSystemTools({ tools: TOOLS, probe: machine(['podman', 'dpkg-deb'], { isRoot: false }), apt }),
    ).rejects.toThrow(/apt-get install -y --no-install-recommends chromium'/);
    expect(calls).toEqual([]);
  });

  it('names the log and the command when apt-get fails twice', async () => {
    const logFile = path.join(mkdtempSync(path.join(os.tmpdir(), 'system-tools-')), 'apt.log');
    const calls: string[] = [];
    const apt = (args: readonly string[]): Promise<number> => {
      calls.push(args[0] ?? '');
      return Promise.resolve(args[0] === 'update' ? 0 : 100);
    };
    await expect(
      ensureSystemTools({
        tools: TOOLS,
        probe: machine(['podman', 'dpkg-deb'], { isRoot: true }),
        apt,
        log: () => undefined,
        logFile,
      }),
    ).rejects.toThrow(
      `apt-get install chromium failed (exit 100); its output is in ${logFile}. Install them by hand ` +
        `(${installCommand(['chromium'])}) and run the tests again.`,
    );
    expect(calls).toEqual(['install', 'update', 'install']);
  });
});

describe('hasCommand', () => {
  it('finds executables on PATH only', () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'system-tools-path-'));
    try {
      writeFileSync(path.join(dir, 'tool-x'), '#!/bin/sh\n');
      writeFileSync(path.join(dir, 'not-executable'), '');
      chmodSync(path.join(dir, 'tool-x'), 0o755);
      expect(hasCommand('tool-x', { PATH: dir })).toBe(true);
      expect(hasCommand('not-executable', { PATH: dir })).toBe(false);
      expect(hasCommand('tool-x', { PATH: '/nonexistent' })).toBe(false);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
