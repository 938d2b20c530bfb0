"""Prototype, measured once (issue 25, not shipped): a real-vs-generated discriminator as a plausibility feature.

    python benchmarks/proto_discriminator.py      (~15 min on a loaded 2-core machine)

A logistic regression (liblinear, C=0.3) over hashed word 1-3-grams (2^18 buckets, crc32) separating the distinct
safe graded-enja sentences (the judged ones held out) from 60,000 distinct new sentences the default SPINEDEP model
generates without a target word (cefr:C2; copies of training sentences dropped).  It prints the AUC of its decision
value on the judged generated sentences (no fitting on them) and saves the values for combination with the other
features (/tmp/disc_scores_C0.3.npy, in the order of bench_plausibility's sets).  Measured 2026-11-27: AUC 0.652
alone; with the Kneser-Ney and pocketsphinx features (5-fold CV over the 570 judged generated) 0.744 against 0.725
without it; sheets-set held out 0.742 against 0.717.  Not shipped: +0.02 AUC for a 60k-sentence generation step in
the build and a 2^18-weight file.
"""
import time, zlib, numpy as np, json, sys
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parent))
from treegram.plugins.vocabgen.build_default import read_graded
from treegram.plugins.vocabgen.parsing import parse_sentences
from treegram.plugins.vocabgen.vocab import user_cache_dir, cefr_vocabulary
from treegram.plugins.vocabgen.default import load_default_model, default_corpus
from treegram.plugins.vocabgen.generator import ConstrainedGenerator
from treegram.plugins.vocabgen.corpus import dedup_key
import scipy.sparse as sp
t0=time.time()
rows=read_graded(Path('/work/shared/data'))
parsed=parse_sentences([r[0] for r in rows], cache_dir=user_cache_dir()/"parses")
import bench_plausibility as bp
judged={n: bp.load_set(n) for n in bp.DEV_SETS+bp.HELD_SETS}
held={dedup_key(t) for v in judged.values() for t,*_ in v}
real=[]; seen=set()
for p in parsed:
    k=dedup_key(" ".join(p.words))
    if k in seen or k in held: continue
    seen.add(k); real.append([w.lower() for w in p.words])
model=load_default_model(); corpus=default_corpus()
gen=ConstrainedGenerator(model.generation, model.system, cefr_vocabulary('C2'))
rng=np.random.default_rng(0)
fake=[]; fs=set()
while len(fake) < 60000:
    sents,_=gen.sample(5000, rng)
    for s in sents:
        k=dedup_key(s.text)
        if k in fs or k in seen or k in held or corpus.is_training_sentence(s.tokens): continue
        fs.add(k); fake.append([t.lower() for t in s.tokens])
    print(len(fake), time.time()-t0, flush=True)
B=1<<18
def feats(toks):
    t=['<s>','<s>']+toks+['</s>']
    out=set()
    for n in (1,2,3):
        for i in range(len(t)-n+1):
            g=' '.join(t[i:i+n])
            if g in ('<s>','<s> <s>'): continue
            out.add(zlib.crc32(g.encode())%B)
    return sorted(out)
def mat(S):
    ind=[];ptr=[0]
    for s in S:
        f=feats(s); ind.extend(f); ptr.append(len(ind))
    return sp.csr_matrix((np.ones(len(ind),np.float32),np.array(ind),np.array(ptr)),shape=(len(S),B))
X=sp.vstack([mat(real),mat(fake)]).tocsr(); y=np.r_[np.ones(len(real)),np.zeros(len(fake))]
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import roc_auc_score
for C in (0.3,):
    clf=LogisticRegression(C=C,max_iter=300,solver='liblinear').fit(X,y)
    print('C',C,'train acc', clf.score(X,y), time.time()-t0, flush=True)
    tok=bp.tokenize([t for v in judged.values() for t,*_ in v])
    lab=[(src,p) for v in judged.values() for _,src,p,_ in v]
    sc=clf.decision_function(mat([[w.lower() for w in t] for t in tok]))
    g=np.array([s!='corpus' for s,_ in lab]); yy=np.array([p for _,p in lab])
    print('AUC generated', roc_auc_score(yy[g], sc[g]), 'all', roc_auc_score(yy, sc), flush=True)
    np.save(f'/tmp/disc_scores_C{C}.npy', sc)
    np.save(f'/tmp/disc_coef_C{C}.npy', np.r_[clf.coef_[0], clf.intercept_])
