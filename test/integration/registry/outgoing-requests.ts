// Records every HTTP request this process starts, through the diagnostics channels of undici and node:http, so a
// test can prove that a refused redirect never even tried to connect. Works for both HTTP clients.
import diagnostics from 'node:diagnostics_channel';

export interface OutgoingRequests {
  /** Hosts (hostname or origin) of the requests started so far, in order. */
  readonly hosts: string[];
  stop(): void;
}

export function recordOutgoingRequests(): OutgoingRequests {
  const hosts: string[] = [];
  const onUndici = (message: unknown): void => {
    const origin = (message as { request?: { origin?: unknown } }).request?.origin;
    hosts.push(String(origin));
  };
  const onNode = (message: unknown): void => {
    const host = (message as { request?: { host?: unknown } }).request?.host;
    hosts.push(String(host));
  };
  diagnostics.subscribe('undici:request:create', onUndici);
  diagnostics.subscribe('http.client.request.start', onNode);
  return {
    hosts,
    stop: () => {
      diagnostics.unsubscribe('undici:request:create', onUndici);
      diagnostics.unsubscribe('http.client.request.start', onNode);
    },
  };
}
