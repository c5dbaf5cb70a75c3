// Completion over time since the update started: the control plane and each pool, one line each (uPlot, drawn on
// a canvas; the numbers are also given as text for screen readers).
import { useEffect, useRef } from 'react';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import type { CompletionSample } from '../../view-types.js';

const COLOURS = ['#0066cc', '#3e8635', '#f0ab00', '#8476d1', '#009596', '#c9190b'];

/** "45s", "3m", "2m30s", "1h5m": an axis tick in elapsed time. */
function elapsed(seconds: number): string {
  const s = Math.round(seconds);
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m${s % 60 ? `${s % 60}s` : ''}`;
  return `${Math.floor(s / 3600)}h${Math.floor((s % 3600) / 60) ? `${Math.floor((s % 3600) / 60)}m` : ''}`;
}

export function CompletionPlot({ history }: { history: readonly CompletionSample[] }) {
  const host = useRef<HTMLDivElement>(null);
  const plot = useRef<uPlot | null>(null);
  const poolNames = [...new Set(history.flatMap((s) => s.pools.map((p) => p.name)))];
  const seriesKey = poolNames.join('\u0000');

  useEffect(() => {
    const el = host.current;
    if (!el) return;
    const opts: uPlot.Options = {
      width: Math.max(320, el.clientWidth || 640),
      height: 220,
      scales: { x: { time: false }, y: { range: [0, 100] } },
      axes: [
        {
          label: 'time since the update started',
          // Whole seconds and round minutes/hours only, so two ticks never print the same rounded label.
          incrs: [1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 14400, 28800],
          values: (_u, ticks) => ticks.map(elapsed),
        },
        { label: '% complete' },
      ],
      series: [
        { label: 'Elapsed', value: (_u, v) => (v === null ? '--' : elapsed(v)) },
        { label: 'Control plane', stroke: COLOURS[0], width: 2 },
        ...poolNames.map((name, i) => ({
          label: `Pool ${name}`,
          stroke: COLOURS[(i + 1) % COLOURS.length],
          width: 2,
        })),
      ],
    };
    plot.current = new uPlot(opts, [[], [], ...poolNames.map(() => [])], el);
    return () => {
      plot.current?.destroy();
      plot.current = null;
    };
    // Rebuilt only when the set of pools changes; data updates go through setData below.
  }, [seriesKey]);

  useEffect(() => {
    const data: uPlot.AlignedData = [
      history.map((s) => s.atSeconds),
      history.map((s) => s.controlPlane),
      ...poolNames.map((name) =>
        history.map((s) => s.pools.find((p) => p.name === name)?.completion ?? null),
      ),
    ];
    plot.current?.setData(data);
  });

  const last = history.at(-1);
  return (
    <figure aria-label="Completion over time" style={{ margin: 0 }}>
      <div ref={host} data-testid="completion-plot" data-points={history.length} />
      <figcaption className="pf-v6-screen-reader">
        {last
          ? `After ${elapsed(last.atSeconds)}: control plane ${last.controlPlane}%` +
            last.pools.map((p) => `, pool ${p.name} ${p.completion}%`).join('')
          : 'No completion recorded yet'}
      </figcaption>
    </figure>
  );
}
