"""Compares run.py's pickles: same exception type, or same dtype/shape and the max difference (-v: list both-error cases)."""
import pickle
import sys
import numpy as np
m = pickle.load(open(sys.argv[1], 'rb')); k = pickle.load(open(sys.argv[2], 'rb'))
def same(x, y, tol):
    if x[0] != y[0]: return f'kind {x[0]} vs {y[0]}'
    if x[0] == 'tuple':
        if len(x[1]) != len(y[1]): return 'tuple len'
        for a, b in zip(x[1], y[1]):
            d = same(a, b, tol)
            if d: return d
        return ''
    if x[0] in ('arr', 'pil'):
        if x[0] == 'pil' and x[1] != y[1]: return f'mode {x[1]} vs {y[1]}'
        a, b = x[-1], y[-1]
        if a.dtype != b.dtype or a.shape != b.shape: return f'{a.dtype}{a.shape} vs {b.dtype}{b.shape}'
        if a.dtype.kind in 'US': return '' if (a == b).all() else 'strings differ'
        d = np.abs(a.astype(float) - b.astype(float)).max() if a.size else 0
        return '' if d <= tol else f'maxdiff {d}'
    return '' if x == y else f'{x} vs {y}'
bad = 0
for line, mv in m.items():
    kv = k[line]
    if mv[0] == 'err' or kv[0] == 'err':
        if mv[0] != kv[0] or mv[1] != kv[1]:
            print('DIFF', line, '\n   ms:', mv, '\n   kiln:', kv if kv[0] != 'ok' else kv[1][0]); bad += 1
        elif '-v' in sys.argv: print('both err', line, mv[1], '|', kv[2][:100])
        continue
    if mv[0] == 'crash' or kv[0] == 'crash':
        print('CRASH', line, mv[0], kv[0]); continue
    d = same(mv[1], kv[1], 1e-5)
    if d: print('DIFF', line, d); bad += 1
print(len(m), 'cases', bad, 'differ')
