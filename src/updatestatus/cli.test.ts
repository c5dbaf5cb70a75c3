// `tessera upgrade status` as commander parses it: oc's connection flags reach the command's options under the
// names the kubeconfig overrides use.
import { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { registerUpgradeCommands } from './cli.js';
import { type UpgradeStatusFlags, parseUpgradeStatusOptions } from './command.js';

/** The flags `args` give `upgrade status`, as its action would receive them (the action itself does not run). */
async function statusFlags(...args: string[]): Promise<UpgradeStatusFlags> {
  const program = new Command('tessera').exitOverride().configureOutput({ writeErr: () => undefined });
  registerUpgradeCommands(program);
  const status = program.commands
    .find((c) => c.name() === 'upgrade')
    ?.commands.find((c) => c.name() === 'status');
  let flags: UpgradeStatusFlags | undefined;
  status?.action((opts: UpgradeStatusFlags) => {
    flags = opts;
  });
  await program.parseAsync(['upgrade', 'status', ...args], { from: 'user' });
  if (!flags) throw new Error('the action did not run');
  return flags;
}

describe('upgrade status connection flags', () => {
  it('become the kubeconfig overrides, --as-group repeatable', async () => {
    const flags = await statusFlags(
      '--context=ctx',
      '-s',
      'api.example.com:6443',
      '--certificate-authority',
      '/ca.pem',
      '--token',
      'sha256~t',
      '--as',
      'system:serviceaccount:ns:sa',
      '--as-group',
      'g1',
      '--as-group',
      'g2',
      '--as-uid',
      '42',
    );
    expect(parseUpgradeStatusOptions(flags).connection).toEqual({
      context: 'ctx',
      server: 'https://api.example.com:6443',
      certificateAuthority: '/ca.pem',
      insecureSkipTlsVerify: undefined,
      token: 'sha256~t',
      impersonateUser: 'system:serviceaccount:ns:sa',
      impersonateGroups: ['g1', 'g2'],
      impersonateUid: '42',
    });
    expect(
      parseUpgradeStatusOptions(await statusFlags('--insecure-skip-tls-verify')).connection,
    ).toMatchObject({ insecureSkipTlsVerify: true, impersonateGroups: undefined });
  });

  it('refuses a --server that is not an API server address before the command runs', async () => {
    await expect(statusFlags('--server', 'ftp://x')).rejects.toMatchObject({
      exitCode: 1,
      message:
        "error: option '-s, --server <url>' argument 'ftp://x' is invalid. Expected an https URL such as https://api.example.com:6443, or host:port.",
    });
  });
});
