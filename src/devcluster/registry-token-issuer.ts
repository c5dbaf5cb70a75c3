// The local registry's token service (Docker registry token authentication): an in-process HTTPS endpoint that
// checks Basic credentials, grants the requested scopes (only `pull`, and only with `anonymousPull`, to anonymous
// clients) and signs ES256 JWTs with a certificate the registry trusts through its rootcertbundle. The whole Bearer
// flow is real; the issuer lives in this process, so the registry is usable only while this process runs.
import { createPrivateKey, randomUUID, sign, type KeyObject } from 'node:crypto';
import https from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { freePort } from './processes.js';

export const TOKEN_SERVICE = 'tessera-local-registry';
export const TOKEN_ISSUER = 'tessera-local-token-issuer';

export interface TokenRequest {
  readonly subject: string;
  readonly scopes: readonly string[];
  /** HTTP status the issuer answered. */
  readonly status: number;
}

export interface Access {
  readonly type: string;
  readonly name: string;
  readonly actions: readonly string[];
}

export interface TokenIssuerOptions {
  /** Certificate and key the tokens are signed with (issued by the CA in the registry's rootcertbundle). */
  readonly signing: { readonly certPem: string; readonly keyPem: string };
  /** The HTTPS endpoint's serving certificate. */
  readonly serving: { readonly certPem: string; readonly keyPem: string };
  /** User name -> password. */
  readonly users: Readonly<Record<string, string>>;
  /** Token lifetime in seconds. */
  readonly lifetimeSeconds: number;
  /** Let anonymous clients pull. */
  readonly anonymousPull: boolean;
}

function b64url(data: Buffer | string): string {
  return Buffer.from(data).toString('base64url');
}

function pemToDerBase64(pem: string): string {
  return pem.replace(/-----[^-]+-----/g, '').replace(/\s+/g, '');
}

/** `repository:name:pull,push` scopes (several per parameter, space-separated) as access entries. */
export function parseScopes(scopes: readonly string[]): Access[] {
  return scopes.flatMap((scope) =>
    scope.split(' ').flatMap((one) => {
      const parts = one.split(':');
      if (parts.length < 3) return [];
      const actions = (parts.pop() ?? '').split(',').filter(Boolean);
      const type = parts.shift() ?? '';
      return [{ type, name: parts.join(':'), actions }];
    }),
  );
}

export class TokenIssuer {
  private readonly signingKey: KeyObject;
  private readonly x5c: string[];
  private readonly requests: TokenRequest[] = [];
  private server: https.Server | undefined;
  private realmUrl = '';

  constructor(private readonly options: TokenIssuerOptions) {
    this.signingKey = createPrivateKey(options.signing.keyPem);
    this.x5c = [pemToDerBase64(options.signing.certPem)];
  }

  /** The token endpoint, once started. */
  get realm(): string {
    return this.realmUrl;
  }

  /** Listens on a free loopback port; resolves with the realm (token endpoint URL). */
  async start(): Promise<string> {
    const port = await freePort();
    this.realmUrl = `https://127.0.0.1:${port}/token`;
    const server = https.createServer(
      { cert: this.options.serving.certPem, key: this.options.serving.keyPem },
      (req, res) => this.answer(req, res),
    );
    this.server = server;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => resolve());
    });
    return this.realmUrl;
  }

  /** A signed token for `subject` granting `access`. */
  mint(subject: string, access: readonly Access[]): string {
    const now = Math.floor(Date.now() / 1000);
    const header = b64url(JSON.stringify({ typ: 'JWT', alg: 'ES256', x5c: this.x5c }));
    const claims = b64url(
      JSON.stringify({
        iss: TOKEN_ISSUER,
        sub: subject,
        aud: TOKEN_SERVICE,
        exp: now + this.options.lifetimeSeconds,
        nbf: now - 10,
        iat: now,
        jti: randomUUID(),
        access,
      }),
    );
    const signature = sign('sha256', Buffer.from(`${header}.${claims}`), {
      key: this.signingKey,
      dsaEncoding: 'ieee-p1363',
    });
    return `${header}.${claims}.${b64url(signature)}`;
  }

  /** Token requests answered so far: authenticated user ('' = anonymous), scopes asked, status. */
  tokenRequests(): readonly TokenRequest[] {
    return [...this.requests];
  }

  async close(): Promise<void> {
    const server = this.server;
    await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
    server?.closeAllConnections();
  }

  private answer(req: IncomingMessage, res: ServerResponse): void {
    const url = new URL(req.url ?? '/', this.realmUrl);
    if (url.pathname !== '/token') {
      res.writeHead(404).end();
      return;
    }
    const scopes = url.searchParams.getAll('scope');
    const { subject, valid } = this.authenticate(req.headers.authorization ?? '');
    if (!valid) {
      this.requests.push({ subject, scopes, status: 401 });
      res
        .writeHead(401, { 'content-type': 'application/json' })
        .end(JSON.stringify({ errors: [{ code: 'UNAUTHORIZED', message: 'bad credentials' }] }));
      return;
    }
    this.requests.push({ subject, scopes, status: 200 });
    const token = this.mint(subject, this.grant(subject, parseScopes(scopes)));
    res.writeHead(200, { 'content-type': 'application/json' }).end(
      JSON.stringify({
        token,
        access_token: token,
        expires_in: this.options.lifetimeSeconds,
        issued_at: new Date().toISOString(),
      }),
    );
  }

  /** The user a Basic header names ('' without one: anonymous) and whether its password is right. */
  private authenticate(header: string): { subject: string; valid: boolean } {
    if (!header.startsWith('Basic ')) return { subject: '', valid: true };
    const decoded = Buffer.from(header.slice(6), 'base64').toString('utf8');
    const colon = decoded.indexOf(':');
    const user = decoded.slice(0, colon);
    const users = this.options.users;
    const valid = colon >= 0 && users[user] !== undefined && users[user] === decoded.slice(colon + 1);
    return { subject: user, valid };
  }

  /** Users get what they ask for; anonymous clients only `pull`, and only with anonymousPull. */
  private grant(subject: string, requested: readonly Access[]): Access[] {
    return requested
      .map((a) => ({
        ...a,
        actions:
          subject !== ''
            ? a.actions
            : this.options.anonymousPull
              ? a.actions.filter((x) => x === 'pull')
              : [],
      }))
      .filter((a) => a.actions.length > 0);
  }
}
