// Makes text a registry sent safe to show in an error message: control and bidirectional-formatting characters
// are replaced, runs of whitespace collapsed, and the length capped, so a hostile or broken registry cannot
// forge log lines, hide text on a terminal, or flood messages. Pure.

/** Longest registry-provided text shown, in characters (the ellipsis excluded). */
export const maxRegistryTextLength = 200;

/** `text` with C0/C1 controls and format characters (bidi overrides, zero-width) removed, capped at `max`. */
export function registryText(text: string, max = maxRegistryTextLength): string {
  const clean = text
    .replace(/[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]+/gu, ' ')
    .replace(/\s+/g, ' ')
    .trim();
  const chars = Array.from(clean);
  return chars.length <= max ? clean : `${chars.slice(0, max).join('')}…`;
}
