import { Command, CommanderError, InvalidArgumentError } from 'commander';
import { describe, expect, it } from 'vitest';
import {
  collectRepeatable,
  parseChoice,
  parseCount,
  parseDuration,
  parseListenPort,
  parsePort,
  parsePositiveCount,
  parseServerUrl,
} from './flags.js';

/** The reason a parser gives for refusing `value`, as commander shows it after "argument '...' is invalid.". */
function refusal(parse: (value: string) => unknown, value: string): string {
  try {
    parse(value);
  } catch (err) {
    expect(err).toBeInstanceOf(InvalidArgumentError);
    return (err as Error).message;
  }
  throw new Error(`accepted ${JSON.stringify(value)}`);
}

describe('parsePort', () => {
  it('takes 1 to 65535', () => {
    expect(parsePort('1')).toBe(1);
    expect(parsePort('65535')).toBe(65_535);
  });
  it('refuses 0, past 65535, and anything but digits', () => {
    for (const bad of ['0', '65536', '70000', '-1', '80.5', '1e3', '0x50', ' 80', '', 'http'])
      expect(refusal(parsePort, bad), bad).toBe('Expected a port number from 1 to 65535.');
  });
});

describe('parseListenPort', () => {
  it('takes 0 (any free port) to 65535', () => {
    expect(parseListenPort('0')).toBe(0);
    expect(parseListenPort('9443')).toBe(9443);
    expect(parseListenPort('65535')).toBe(65_535);
  });
  it('refuses past 65535 and non-numbers', () => {
    for (const bad of ['65536', '70000', '-1', 'any'])
      expect(refusal(parseListenPort, bad), bad).toBe(
        'Expected a port number from 1 to 65535, or 0 for any free port.',
      );
  });
});

describe('parseCount and parsePositiveCount', () => {
  it('take whole numbers; only parseCount takes 0', () => {
    expect(parseCount('0')).toBe(0);
    expect(parseCount('8')).toBe(8);
    expect(parsePositiveCount('1')).toBe(1);
    expect(refusal(parsePositiveCount, '0')).toBe('Expected a whole number, 1 or more.');
  });
  it('refuse fractions, signs, exponents and numbers past 2^53', () => {
    for (const bad of ['1.5', '-2', '+2', '1e2', '9007199254740993', 'eight'])
      expect(refusal(parseCount, bad), bad).toBe('Expected a whole number, 0 or more.');
  });
});

describe('parseDuration', () => {
  it('turns seconds or milliseconds into whole milliseconds', () => {
    expect(parseDuration('s')('300')).toBe(300_000);
    expect(parseDuration('s')('1.5')).toBe(1_500);
    expect(parseDuration('ms')('2000')).toBe(2_000);
  });
  it('takes 0 only where the flag gives it a meaning', () => {
    expect(parseDuration('s', { allowZero: true })('0')).toBe(0);
    expect(refusal(parseDuration('s'), '0')).toBe('Expected a number of seconds, more than 0.');
    expect(refusal(parseDuration('ms', { allowZero: true }), '-5')).toBe(
      'Expected a number of milliseconds, 0 or more.',
    );
  });
  it('refuses units, signs and non-numbers', () => {
    for (const bad of ['5s', '-1', 'Infinity', '', '1e3'])
      expect(refusal(parseDuration('s'), bad), bad).toBe('Expected a number of seconds, more than 0.');
  });
});

describe('parseChoice', () => {
  it('takes one of the choices and names them otherwise', () => {
    const output = parseChoice(['text', 'json']);
    expect(output('json')).toBe('json');
    expect(refusal(output, 'yaml')).toBe('Allowed choices are text, json.');
  });
});

describe('parseServerUrl', () => {
  it('takes an http(s) URL, or host:port as https, without a trailing slash', () => {
    expect(parseServerUrl('https://api.example.com:6443/')).toBe('https://api.example.com:6443');
    expect(parseServerUrl('http://127.0.0.1:8080')).toBe('http://127.0.0.1:8080');
    expect(parseServerUrl('api.example.com:6443')).toBe('https://api.example.com:6443');
    expect(parseServerUrl('[::1]:6443')).toBe('https://[::1]:6443');
    expect(parseServerUrl('https://lb.example.com/cluster-a')).toBe('https://lb.example.com/cluster-a');
    // Empty: no override, as in kubectl.
    expect(parseServerUrl('')).toBe('');
  });
  it('refuses other schemes, non-URLs, and what would break the request paths', () => {
    for (const bad of ['ftp://x', 'https://', 'https://exa mple', 'unix:///var/run/k8s.sock'])
      expect(refusal(parseServerUrl, bad), bad).toBe(
        'Expected an https URL such as https://api.example.com:6443, or host:port.',
      );
    for (const bad of ['https://x?watch=1', 'https://x#top', 'https://user:pw@x'])
      expect(refusal(parseServerUrl, bad), bad).toBe(
        'Expected a URL without credentials, query or fragment.',
      );
  });
});

describe('in a commander program', () => {
  it('collects a repeatable flag in the order given', async () => {
    let groups: unknown;
    const program = new Command('tessera').exitOverride();
    program
      .command('get')
      .option('--as-group <group>', 'group', collectRepeatable)
      .action((opts: { asGroup?: string[] }) => {
        groups = opts.asGroup;
      });
    await program.parseAsync(['get', '--as-group', 'b', '--as-group', 'a,c'], { from: 'user' });
    expect(groups).toEqual(['b', 'a,c']);
    await program.parseAsync(['get'], { from: 'user' });
    expect(groups).toBeUndefined();
  });

  it('refuses a bad flag before the action runs, naming the flag, the value and the reason, exit code 1', async () => {
    let ran = false;
    let stderr = '';
    const program = new Command('tessera')
      .exitOverride()
      .configureOutput({ writeErr: (text) => (stderr += text) });
    program
      .command('serve')
      .option('--port <port>', 'port', parseListenPort)
      .action(() => {
        ran = true;
      });
    const run = program.parseAsync(['serve', '--port', '70000'], { from: 'user' });
    await expect(run).rejects.toBeInstanceOf(CommanderError);
    await expect(run).rejects.toMatchObject({ exitCode: 1 });
    expect(ran).toBe(false);
    expect(stderr).toBe(
      "error: option '--port <port>' argument '70000' is invalid. Expected a port number from 1 to 65535, or 0 for any free port.\n",
    );
  });
});
