// One page of a list, and the page sizes a client may ask for: no view sends more than MAX_PAGE_SIZE rows at once,
// however many nodes or pods the cluster has.
import type { Page } from './view-types.js';

export const DEFAULT_PAGE_SIZE = 100;
export const MAX_PAGE_SIZE = 500;

export interface PageRequest {
  readonly offset: number;
  readonly limit: number;
}

export const FIRST_PAGE: PageRequest = { offset: 0, limit: DEFAULT_PAGE_SIZE };

/** Rows `offset`.. of `items`, at most `limit` (clamped to 1..MAX_PAGE_SIZE); an offset past the end gives none. */
export function pageOf<T>(items: readonly T[], request: PageRequest = FIRST_PAGE): Page<T> {
  const limit = Math.min(MAX_PAGE_SIZE, Math.max(1, Math.floor(request.limit) || DEFAULT_PAGE_SIZE));
  const offset = Math.max(0, Math.floor(request.offset) || 0);
  return { items: items.slice(offset, offset + limit), total: items.length, offset, limit };
}

/** A page request from query parameters (`<prefix>Offset`, `<prefix>Limit`); absent or malformed values: defaults. */
export function pageRequestFrom(query: URLSearchParams, prefix: string): PageRequest {
  const number = (name: string, fallback: number): number => {
    const text = query.get(name);
    if (text === null || !/^\d{1,9}$/.test(text)) return fallback;
    return Number(text);
  };
  return {
    offset: number(`${prefix}Offset`, 0),
    limit: Math.min(MAX_PAGE_SIZE, Math.max(1, number(`${prefix}Limit`, DEFAULT_PAGE_SIZE))),
  };
}
