"""Runs every expression of cases.txt under MindSpore (`ms`) or Kiln (`kiln`) and pickles the results.

    /work/msvenv/bin/python run.py ms cases.txt /tmp/ms.pkl
    PYTHONPATH=python .venv/bin/python run.py kiln cases.txt /tmp/kiln.pkl
    .venv/bin/python cmp.py /tmp/ms.pkl /tmp/kiln.pkl

Each case runs in a forked child (MindSpore aborts the process on some inputs). Images are written to a temporary
folder first (PNG/JPEG/BMP of fixed random data)."""
import os
import sys
import pickle
import tempfile
import numpy as np
from PIL import Image
kiln = sys.argv[1] == 'kiln'
if kiln:
    import kiln.dataset.vision as V
else:
    import mindspore.dataset.vision as V
Inter, Border = V.Inter, V.Border
rs=np.random.RandomState(0); img=rs.randint(0,256,(6,8,3)).astype(np.uint8); g2=img[:,:,0].copy(); g3=img[:,:,:1].copy(); f=img.astype(np.float32); s=np.arange(12,dtype=np.uint8).reshape(3,4)
a=np.array([1,2,3],dtype=np.int32); big=rs.randint(0,256,(37,53,3)).astype(np.uint8)
_dir = tempfile.mkdtemp()
_x = np.linspace(0, 255, 64 * 48 * 3).reshape(48, 64, 3).astype(np.uint8)
_x = (_x // 2 + np.random.RandomState(3).randint(0, 100, _x.shape) // 2).astype(np.uint8)
for _name, _im, _fmt in [("rgb.jpg", Image.fromarray(_x), "JPEG"), ("gray.jpg", Image.fromarray(_x[:, :, 0]), "JPEG"),
                         ("rgba.png", Image.fromarray(np.dstack([_x, _x[:, :, :1]])), "PNG"),
                         ("gray.png", Image.fromarray(_x[:, :, 1]), "PNG"), ("p.png", Image.fromarray(_x).convert("P"), "PNG"),
                         ("rgb.bmp", Image.fromarray(_x), "BMP"),
                         ("rgb.png", Image.fromarray(np.random.RandomState(5).randint(0, 256, (20, 30, 3)).astype(np.uint8)), "PNG")]:
    _im.save(os.path.join(_dir, _name), _fmt)
rd = lambda n: np.fromfile(os.path.join(_dir, n), np.uint8)
def enc(r):
    if isinstance(r, Image.Image): return ('pil', r.mode, np.asarray(r))
    if isinstance(r, tuple): return ('tuple', [enc(x) for x in r])
    if isinstance(r, np.ndarray): return ('arr', r)
    return ('other', repr(r)[:60])
res = {}
lines = [l for l in open(sys.argv[2]).read().split('\n') if l.strip() and not l.startswith('#')]
for line in lines:
    sys.stdout.flush()
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        try: out = ('ok', enc(eval(line)))
        except Exception as e: out = ('err', type(e).__name__, str(e).split('\n')[-1][:200] if kiln else ' '.join(str(e).split())[:300])  # noqa: BLE001 (the error is the result)
        with os.fdopen(w, 'wb') as fh: pickle.dump(out, fh)
        os._exit(0)
    os.close(w)
    with os.fdopen(r, 'rb') as fh: data = fh.read()
    os.waitpid(pid, 0)
    res[line] = pickle.loads(data) if data else ('crash',)
pickle.dump(res, open(sys.argv[3], 'wb'))
