#!/usr/bin/env python3
"""sfio_plot.py - PNG plots for sfio-bench results (matplotlib, Agg backend).

  sfio_plot.py summary SUMMARY.csv OUTDIR [BASELINE [SCENARIOS]]
      (SCENARIOS: comma list, only those panels, in that order)
      summary.png: one panel per scenario/op/storage, bars = median MB/s with
                   min..max whiskers, baseline hatched, failed runs marked FAIL
      noncontig_scaling.png: MB/s against the number of regions per configuration
  sfio_plot.py sweep SWEEP.csv OUTDIR [SCENARIO]
      sweep.png: time of every combination, best first (one panel per storage mode)
  sfio_plot.py iorsweep IORSWEEP.csv OUTDIR
      iorsweep.png: suite / best(stock OMPIO, ROMIO) per IOR cell, a heat map per
                    storage mode and op (rows: mode and transfer, columns: segments)
"""
import csv
import math
import os
import re
import sys

import matplotlib

matplotlib.use('Agg')
import matplotlib.pyplot as plt  # noqa: E402


def load(path):
    with open(path) as f:
        return list(csv.DictReader(f))


def summary(rows, outdir, baseline):
    keys = []
    for r in rows:
        k = (r['scenario'], r['op'], r['netstore'])
        if k not in keys:
            keys.append(k)
    if not keys:
        return
    ncol = min(3, len(keys))
    nrow = math.ceil(len(keys) / ncol)
    fig, axes = plt.subplots(nrow, ncol, figsize=(6.0 * ncol, 3.6 * nrow), squeeze=False)
    for i, k in enumerate(keys):
        ax = axes[i // ncol][i % ncol]
        sel = [r for r in rows if (r['scenario'], r['op'], r['netstore']) == k]
        names = [r['config'] for r in sel]
        med = [float(r['median_MBps']) if r['status'] == 'ok' else 0.0 for r in sel]
        lo = [med[j] - float(r['min_MBps']) if r['status'] == 'ok' else 0 for j, r in enumerate(sel)]
        hi = [float(r['max_MBps']) - med[j] if r['status'] == 'ok' else 0 for j, r in enumerate(sel)]
        colors = ['tab:orange' if n.startswith('suite') or n in ('adaptive', 'listlock-ufs')
                  else 'tab:green' if n.startswith('romio') else 'tab:blue' for n in names]
        bars = ax.bar(range(len(sel)), med, yerr=[lo, hi], color=colors, capsize=3)
        top = max(med + [1.0])
        for j, r in enumerate(sel):
            if r['config'] == baseline:
                bars[j].set_hatch('//')
            if r['status'] != 'ok':
                why = 'FAIL'
                if 'verify' in r.get('reason', ''):
                    why = 'FAIL\nverify'
                ax.text(j, top * 0.05, why, ha='center', va='bottom', color='red', fontsize=7,
                        rotation=90)
            elif r.get('ratio'):
                ax.text(j, med[j], '%.2fx' % float(r['ratio']), ha='center', va='bottom',
                        fontsize=6)
        ax.set_xticks(range(len(sel)))
        ax.set_xticklabels(names, rotation=45, ha='right', fontsize=7)
        ax.set_ylabel('MB/s')
        ax.set_title('%s %s (np %s, %s)' % (k[0], k[1], sel[0]['np'],
                                           'netstore' if k[2] == 'on' else 'local'), fontsize=9)
        ax.grid(axis='y', alpha=0.3)
    for j in range(len(keys), nrow * ncol):
        axes[j // ncol][j % ncol].axis('off')
    fig.suptitle('sfio-bench: median MB/s (whiskers min..max; ratios vs %s)' % baseline)
    fig.tight_layout(rect=[0, 0, 1, 0.97])
    p = os.path.join(outdir, 'summary.png')
    fig.savefig(p, dpi=90)
    print('plot: %s' % p)

    # region scaling
    nc = [r for r in rows if r['scenario'].startswith('noncontig-r') and r['status'] == 'ok']
    if nc:
        fig, ax = plt.subplots(figsize=(7, 4.5))
        series = {}
        for r in nc:
            regions = int(re.sub(r'\D', '', r['scenario'].split('-r')[1]))
            series.setdefault((r['config'], r['netstore']), []).append(
                (regions, float(r['median_MBps'])))
        for (cfg, ns), pts in sorted(series.items()):
            pts.sort()
            ax.plot([p[0] for p in pts], [p[1] for p in pts], marker='o',
                    label='%s%s' % (cfg, '' if ns == 'on' else ' (local)'))
        ax.set_xscale('log', base=2)
        ax.set_xlabel('regions per rank (same bytes)')
        ax.set_ylabel('MB/s (median)')
        ax.set_title('noncontiguous region scaling')
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
        fig.tight_layout()
        p = os.path.join(outdir, 'noncontig_scaling.png')
        fig.savefig(p, dpi=90)
        print('plot: %s' % p)


def sweep(rows, outdir, scenario):
    """One panel per storage mode (column netstore: off/on; absent in old CSVs)."""
    modes = []
    for r in rows:
        ns = r.get('netstore') or 'on'
        if ns not in modes:
            modes.append(ns)
    panels = []
    for ns in modes:
        ok = sorted([r for r in rows if r['status'] == 'ok' and (r.get('netstore') or 'on') == ns],
                    key=lambda r: float(r['seconds']))
        if ok:
            panels.append((ns, ok[:40]))
    if not panels:
        return
    # shorter labels: drop the parameter names' common prefix (fcoll_adaptive_...)
    names = [kv.split('=', 1)[0] for r in rows for kv in r['combo'].split()]
    pre = os.path.commonprefix(names) if names else ''
    pre = pre[:pre.rfind('_') + 1] if '_' in pre else ''

    def label(r):
        return ' '.join(kv[len(pre):] if kv.startswith(pre) else kv for kv in r['combo'].split())
    height = max(len(ok) for _, ok in panels)
    fig, axes = plt.subplots(1, len(panels), figsize=(6.5 * len(panels), 0.28 * height + 1.5),
                             squeeze=False)
    for ax, (ns, ok) in zip(axes[0], panels):
        secs = [float(r['seconds']) for r in ok]
        ax.barh(range(len(ok)), secs, color=['tab:orange'] + ['tab:blue'] * (len(ok) - 1))
        ax.set_yticks(range(len(ok)))
        ax.set_yticklabels([label(r) for r in ok], fontsize=7)
        ax.invert_yaxis()
        ax.set_xlabel('seconds (median; lower is better)')
        ax.set_title('%s storage' % ('local' if ns == 'off' else 'netstore'), fontsize=9)
        ax.grid(axis='x', alpha=0.3)
    fig.suptitle('sweep on %s%s: best first' % (scenario, ' (parameters %s*)' % pre if pre else ''),
                 fontsize=10)
    fig.tight_layout()
    p = os.path.join(outdir, 'sweep.png')
    fig.savefig(p, dpi=90)
    print('plot: %s' % p)


def iorsweep(rows, outdir):
    storages = list(dict.fromkeys(r['storage'] for r in rows))
    ops = [op for op in ('write', 'read') if any(r['op'] == op for r in rows)]
    if not storages or not ops:
        return
    names = {'off': 'page cache', 'on': 'netstore', 'locks': 'netstore + stripe locks'}
    ylab = list(dict.fromkeys('%s %s' % (r['mode'], r['transfer']) for r in rows))
    segs = sorted({int(r['segments']) for r in rows})
    fig, axes = plt.subplots(len(storages), len(ops),
                             figsize=(1.1 * len(segs) * len(ops) + 3.5,
                                      0.42 * len(ylab) * len(storages) + 1.0 * len(storages) + 1.0),
                             squeeze=False, constrained_layout=True)
    im = None
    for i, sto in enumerate(storages):
        for j, op in enumerate(ops):
            ax = axes[i][j]
            grid = [[math.nan] * len(segs) for _ in ylab]
            for r in rows:
                if r['storage'] != sto or r['op'] != op:
                    continue
                y = ylab.index('%s %s' % (r['mode'], r['transfer']))
                x = segs.index(int(r['segments']))
                grid[y][x] = float(r['ratio']) if r.get('ratio') else math.nan
                txt = '%.2f' % grid[y][x] if r.get('ratio') else 'FAIL'
                ax.text(x, y, txt, ha='center', va='center', fontsize=7,
                        color='red' if txt == 'FAIL' else 'black')
            im = ax.imshow(grid, cmap='RdYlGn', vmin=0.5, vmax=1.5, aspect='auto')
            ax.set_xticks(range(len(segs)))
            ax.set_xticklabels([str(x) for x in segs], fontsize=7)
            ax.set_yticks(range(len(ylab)))
            ax.set_yticklabels(ylab, fontsize=7)
            ax.set_xlabel('segments', fontsize=7)
            ax.set_title('%s, %s' % (names.get(sto, sto), op), fontsize=8)
    fig.colorbar(im, ax=axes.ravel().tolist(), shrink=0.8, label='suite / best stock')
    fig.suptitle('IOR: suite / best of stock OMPIO and ROMIO (>= 0.95 is the target)',
                 fontsize=9)
    p = os.path.join(outdir, 'iorsweep.png')
    fig.savefig(p, dpi=90)
    print('plot: %s' % p)


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    kind, path, outdir = sys.argv[1:4]
    extra = sys.argv[4] if len(sys.argv) > 4 else ''
    rows = load(path)
    if kind == 'summary':
        if len(sys.argv) > 5 and sys.argv[5]:
            want = sys.argv[5].split(',')
            rows = sorted([r for r in rows if r['scenario'] in want],
                          key=lambda r: want.index(r['scenario']))
        summary(rows, outdir, extra or 'romio')
    elif kind == 'sweep':
        sweep(rows, outdir, extra)
    elif kind == 'iorsweep':
        iorsweep(rows, outdir)
    else:
        sys.exit('unknown plot kind %s' % kind)


if __name__ == '__main__':
    main()
