// Go's text/tabwriter as oc configures it (minwidth 0, tabwidth 0, padding 3, pad char ' ', flags 0).
// A cell is text terminated by a tab; the last cell of a line is never padded and never widens a column.
// A column block is a run of consecutive lines that have a cell in that column; widths are per block, so a
// line without tabs (or with fewer cells) ends the blocks it does not take part in.
import { runeCount } from './gofmt.js';

/** Options for {@link formatTable}. */
export interface TabwriterOptions {
  /** Spaces added to the widest cell of a column. Default: 3 (as oc). */
  readonly padding?: number;
}

/**
 * Formats `text` the way writing it to a Go tabwriter and flushing would. The text after the last newline is
 * kept as an unterminated last line.
 */
export function formatTable(text: string, options: TabwriterOptions = {}): string {
  const padding = options.padding ?? 3;
  const lines = text.split('\n').map((line) => line.split('\t'));
  // Flushing terminates the unfinished last cell only when it holds text; an empty one is no cell at all.
  const last = lines[lines.length - 1];
  if (last !== undefined && last.length > 1 && last[last.length - 1] === '') last.pop();
  const out: string[] = [];
  const widths: number[] = [];

  const writeLines = (line0: number, line1: number): void => {
    for (let i = line0; i < line1; i++) {
      const cells = lines[i] ?? [];
      let rendered = '';
      for (let j = 0; j < cells.length; j++) {
        const cell = cells[j] ?? '';
        const width = widths[j];
        rendered += cell;
        // Only the last cell of a line lies beyond the widths of its blocks, so it stays unpadded.
        if (width !== undefined) rendered += ' '.repeat(Math.max(0, width - runeCount(cell)));
      }
      out.push(rendered);
    }
  };

  const format = (line0: number, line1: number): void => {
    const column = widths.length;
    for (let current = line0; current < line1; current++) {
      if (column >= (lines[current]?.length ?? 0) - 1) continue;
      writeLines(line0, current);
      line0 = current;
      let width = 0;
      for (; current < line1; current++) {
        const cells = lines[current] ?? [];
        if (column >= cells.length - 1) break;
        width = Math.max(width, runeCount(cells[column] ?? '') + padding);
      }
      widths.push(width);
      format(line0, current);
      widths.pop();
      line0 = current;
    }
    writeLines(line0, line1);
  };

  format(0, lines.length);
  return out.join('\n');
}
