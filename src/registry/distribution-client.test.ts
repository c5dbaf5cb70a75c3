import { describe, expect, it } from 'vitest';
import { registryErrorDetail } from './distribution-client.js';

const body = (value: unknown): Buffer => Buffer.from(JSON.stringify(value));

describe('registryErrorDetail', () => {
  it('shows the code and message of the first distribution error', () => {
    expect(
      registryErrorDetail(body({ errors: [{ code: 'MANIFEST_UNKNOWN', message: 'manifest unknown' }] })),
    ).toBe(': MANIFEST_UNKNOWN manifest unknown');
  });

  it('never shows a body that is not a distribution error document', () => {
    expect(registryErrorDetail(Buffer.from('<html>internal admin page: secret=42</html>'))).toBe('');
    expect(registryErrorDetail(body({ error: 'secret=42', detail: 'x' }))).toBe('');
    expect(registryErrorDetail(body({ errors: [{ code: 'X', detail: { leaked: 'secret=42' } }] }))).toBe(
      ': X',
    );
  });

  it('strips control characters and caps the message at 200 characters', () => {
    const detail = registryErrorDetail(
      body({ errors: [{ code: 'DENIED', message: `line1\nFAKE LOG LINE\u001b[31m${'y'.repeat(1000)}` }] }),
    );
    expect(detail).not.toContain('\n');
    expect(detail).not.toContain('\u001b');
    expect(detail.startsWith(': DENIED line1 FAKE LOG LINE')).toBe(true);
    expect(detail.length).toBeLessThanOrEqual(': DENIED '.length + 201);
  });

  it('drops a code that is not a distribution error code', () => {
    expect(registryErrorDetail(body({ errors: [{ code: 'a\nb <script>', message: 'm' }] }))).toBe(': m');
  });
});
