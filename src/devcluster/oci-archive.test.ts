import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { filesImage, ociLayoutArchive, tarOf } from './oci-archive.js';

describe('oci archive', () => {
  it('writes a tar that tar(1) lists and extracts byte for byte, with modes', () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'tessera-tar-'));
    try {
      const archive = path.join(dir, 'a.tar');
      writeFileSync(
        archive,
        tarOf([
          { path: 'bin', bytes: Buffer.from('#!/bin/sh\n'), mode: 0o755 },
          { path: 'data/empty', bytes: Buffer.alloc(0) },
          { path: 'big', bytes: Buffer.alloc(1500, 7) },
        ]),
      );
      expect(execFileSync('tar', ['-tvf', archive], { encoding: 'utf8' })).toMatch(/^-rwxr-xr-x .* bin$/m);
      execFileSync('tar', ['-xf', archive, '-C', dir]);
      expect(readFileSync(path.join(dir, 'bin'), 'utf8')).toBe('#!/bin/sh\n');
      expect(readFileSync(path.join(dir, 'big'))).toEqual(Buffer.alloc(1500, 7));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('refuses a path tar headers cannot hold', () => {
    expect(() => tarOf([{ path: 'x'.repeat(101), bytes: Buffer.alloc(0) }])).toThrow(RangeError);
    expect(() => tarOf([{ path: 'tmp/', bytes: Buffer.from('x') }])).toThrow(RangeError);
  });

  it('writes directories with their mode (a world-writable, sticky /tmp for images run as non-root)', () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'tessera-tar-'));
    try {
      const archive = path.join(dir, 'a.tar');
      writeFileSync(archive, tarOf([{ path: 'tmp/', bytes: Buffer.alloc(0), mode: 0o1777 }]));
      expect(execFileSync('tar', ['-tvf', archive], { encoding: 'utf8' })).toMatch(/^drwxrwxrwt .* tmp\/$/m);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("builds an image whose config names the architecture, entrypoint and the layer's digest", () => {
    const image = filesImage({
      architecture: 'arm64',
      files: [{ path: 'pause', bytes: Buffer.from('x'), mode: 0o755 }],
      entrypoint: ['/pause'],
    });
    const [config, layer] = image.blobs;
    expect(JSON.parse(config?.bytes.toString() ?? '')).toMatchObject({
      architecture: 'arm64',
      os: 'linux',
      config: { Entrypoint: ['/pause'], User: '65532' },
      rootfs: { diff_ids: [layer?.digest] },
    });
    const labelled = filesImage({
      architecture: 'amd64',
      files: [],
      entrypoint: ['/x'],
      env: ['PATH=/bin'],
      labels: { 'operators.operatorframework.io.index.configs.v1': '/configs' },
    });
    expect(JSON.parse(labelled.blobs[0]?.bytes.toString() ?? '')).toMatchObject({
      config: {
        Env: ['PATH=/bin'],
        Labels: { 'operators.operatorframework.io.index.configs.v1': '/configs' },
      },
    });
  });

  it('names the image in the layout archive as ctr import reads it', () => {
    const image = filesImage({ architecture: 'amd64', files: [], entrypoint: ['/x'] });
    const dir = mkdtempSync(path.join(os.tmpdir(), 'tessera-oci-'));
    try {
      writeFileSync(path.join(dir, 'i.tar'), ociLayoutArchive(image, 'tessera.dev/dev/pause:1'));
      execFileSync('tar', ['-xf', path.join(dir, 'i.tar'), '-C', dir]);
      const index = JSON.parse(readFileSync(path.join(dir, 'index.json'), 'utf8')) as {
        manifests: Array<{ digest: string; annotations: Record<string, string> }>;
      };
      expect(index.manifests[0]?.digest).toBe(image.manifest.digest);
      expect(index.manifests[0]?.annotations['io.containerd.image.name']).toBe('tessera.dev/dev/pause:1');
      const manifestFile = path.join(dir, 'blobs', 'sha256', image.manifest.digest.slice(7));
      expect(readFileSync(manifestFile)).toEqual(image.manifest.bytes);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
