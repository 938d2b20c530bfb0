"""A small word-level LSTM language model of the corpus sentences: one plausibility feature of the sheet scorer.

Count models see three words at a time; most errors the judged generated sentences still have are agreement or
sense across a clause ("He made up her mind.", "Cheese is made from grapes."), which a recurrent model of the whole
prefix can see.  The model is the usual one (Mikolov et al. 2010; Zaremba et al. 2014), small enough to train here on
a CPU in minutes and to ship as package data:

    x_t = E[w_t],   (h_t, c_t) = LSTM(x_t, h_t-1, c_t-1),   P(w_t+1 | w_<=t) = softmax(E h_t + b)

with the input and output embeddings tied (Press & Wolf 2017), so E is the only large matrix.  Tokens are lowercased;
words outside the `vocab_size` most frequent ones are <unk>.  Like the trigram model (ranking.py) its sentence score
is SLOR: (sum_i log P_lstm(w_i | w_<i) - sum_i log P_uni(w_i)) / (n + 1), over the tokens and </s>.

Training (`train`, in `build_default --only nnlm`) needs PyTorch (`pip install torch==2.13.0`, CPU build); the
weights are saved as a treegram bundle (E as int8 with a scale per row, the LSTM matrices as float16) and scoring
(`LSTMScorer`) is plain numpy, batched over sentences, so sheets never import torch.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Sequence

import numpy as np

BOS, EOS, UNK = "<s>", "</s>", "<unk>"


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return 0.5 * (1.0 + np.tanh(0.5 * x))


class LSTMScorer:
    """numpy inference of the tied-embedding LSTM language model (gates in PyTorch's order: i, f, g, o)."""

    def __init__(self, words: Sequence[str], arrays: dict[str, np.ndarray], info: dict | None = None):
        self.words = list(words)
        self.index = {w: i for i, w in enumerate(self.words)}
        scale = np.asarray(arrays["emb_scale"], dtype=np.float32)
        self.emb = np.asarray(arrays["emb_q"], dtype=np.float32) * scale[:, None]
        self.w_ih = np.asarray(arrays["w_ih"], dtype=np.float32)
        self.w_hh = np.asarray(arrays["w_hh"], dtype=np.float32)
        self.b = np.asarray(arrays["b"], dtype=np.float32)
        self.out_b = np.asarray(arrays["out_b"], dtype=np.float32)
        self.log_uni = np.asarray(arrays["log_uni"], dtype=np.float64)
        self.H = self.w_hh.shape[1]
        self.info = dict(info or {})

    # -- bundle -------------------------------------------------------------------------------------------------
    @staticmethod
    def arrays_from_float(emb, w_ih, w_hh, b, out_b, log_uni) -> dict[str, np.ndarray]:
        emb = np.asarray(emb, dtype=np.float32)
        scale = np.maximum(np.abs(emb).max(axis=1), 1e-8) / 127.0
        return {"emb_q": np.round(emb / scale[:, None]).astype(np.int8), "emb_scale": scale.astype(np.float32),
                "w_ih": np.asarray(w_ih, np.float16), "w_hh": np.asarray(w_hh, np.float16),
                "b": np.asarray(b, np.float32), "out_b": np.asarray(out_b, np.float32),
                "log_uni": np.asarray(log_uni, np.float32)}

    def ids(self, tokens: Sequence[str]) -> list[int]:
        unk = self.index[UNK]
        return [self.index.get(t.lower(), unk) for t in tokens]

    # -- scoring ------------------------------------------------------------------------------------------------
    def token_logprobs_batch(self, batch: Sequence[Sequence[str]]) -> list[np.ndarray]:
        """log P of every token and of </s>, for each sentence (natural log), computed for the batch at once."""
        if not batch:
            return []
        seqs = [self.ids(s) + [self.index[EOS]] for s in batch]
        T = max(len(s) for s in seqs)
        B = len(seqs)
        inp = np.full((B, T), self.index[EOS], dtype=np.int64)
        tgt = np.full((B, T), self.index[EOS], dtype=np.int64)
        for k, s in enumerate(seqs):
            inp[k, 0] = self.index[BOS]
            inp[k, 1:len(s)] = s[:-1]
            tgt[k, :len(s)] = s
        H = self.H
        h = np.zeros((B, H), np.float32)
        c = np.zeros((B, H), np.float32)
        xs = self.emb[inp] @ self.w_ih.T + self.b           # (B, T, 4H): the input part of every gate at once
        out = np.empty((B, T), np.float64)
        for t in range(T):
            g = xs[:, t] + h @ self.w_hh.T
            i, f, gg, o = _sigmoid(g[:, :H]), _sigmoid(g[:, H:2 * H]), np.tanh(g[:, 2 * H:3 * H]), _sigmoid(g[:, 3 * H:])
            c = f * c + i * gg
            h = o * np.tanh(c)
            logits = h @ self.emb.T + self.out_b            # (B, V)
            m = logits.max(axis=1, keepdims=True)
            lse = m[:, 0] + np.log(np.exp(logits - m).sum(axis=1))
            out[:, t] = logits[np.arange(B), tgt[:, t]] - lse
        return [out[k, :len(s)] for k, s in enumerate(seqs)]

    def local_slor_batch(self, batch: Sequence[Sequence[str]], chunk: int = 256) -> list[np.ndarray]:
        """log P_lstm(w_i | w_<i) - log P_uni(w_i) for every token and </s> of each sentence."""
        out: list[np.ndarray] = []
        for start in range(0, len(batch), chunk):
            part = batch[start:start + chunk]
            for s, lp in zip(part, self.token_logprobs_batch(part)):
                ids = np.asarray(self.ids(s) + [self.index[EOS]])
                out.append(lp - self.log_uni[ids])
        return out

    def slor(self, tokens: Sequence[str]) -> float:
        return float(self.local_slor_batch([tokens])[0].mean()) if tokens else float("-inf")


# -- training (build time only; needs torch) -----------------------------------------------------------------------
def train(sentences: Sequence[Sequence[str]], *, vocab_size: int = 6000, dim: int = 128, epochs: int = 3,
          batch_size: int = 512, lr: float = 1e-2, seed: int = 1, log=print) -> tuple[dict, dict[str, np.ndarray]]:
    """Train the LSTM on tokenized sentences (Adam, sentences batched by length, dropout 0.2 on the embeddings and
    outputs) and return (meta, arrays) for `LSTMScorer`.  Deterministic for a seed on one thread count."""
    try:
        import torch
    except ImportError:
        raise SystemExit("training the LSTM scorer needs PyTorch: pip install torch==2.13.0 (CPU build)") from None
    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    counts = Counter(t.lower() for s in sentences for t in s)
    words = [UNK, BOS, EOS] + [w for w, _ in counts.most_common(vocab_size - 3)]
    index = {w: i for i, w in enumerate(words)}
    V = len(words)
    uni = np.ones(V)
    for w, c in counts.items():
        uni[index.get(w, 0)] += c
    uni[index[EOS]] += len(sentences)
    uni[index[BOS]] = 1.0
    log_uni = np.log(uni / uni.sum())
    seqs = [[index.get(t.lower(), 0) for t in s] for s in sentences if s]

    class LM(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = torch.nn.Embedding(V, dim)
            self.rnn = torch.nn.LSTM(dim, dim, batch_first=True)
            self.out_b = torch.nn.Parameter(torch.zeros(V))
            self.drop = torch.nn.Dropout(0.2)

        def forward(self, x):
            h, _ = self.rnn(self.drop(self.emb(x)))
            return self.drop(h) @ self.emb.weight.T + self.out_b

    lm = LM()
    opt = torch.optim.Adam(lm.parameters(), lr=lr)
    by_len: dict[int, list[list[int]]] = {}
    for s in seqs:
        by_len.setdefault(len(s), []).append(s)
    batches = []
    for n, group in by_len.items():
        for k in range(0, len(group), batch_size):
            batches.append((n, group[k:k + batch_size]))
    steps = epochs * len(batches)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=lr, total_steps=steps, pct_start=0.1)
    t0 = time.perf_counter()
    step = 0
    for ep in range(epochs):
        lm.train()
        tot = ntok = 0.0
        for bi in rng.permutation(len(batches)):
            n, group = batches[int(bi)]
            x = torch.tensor([[index[BOS]] + s for s in group])
            y = torch.tensor([s + [index[EOS]] for s in group])
            loss = torch.nn.functional.cross_entropy(lm(x).reshape(-1, V), y.reshape(-1))
            opt.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(lm.parameters(), 1.0)
            opt.step()
            sched.step()
            step += 1
            tot += float(loss.detach()) * y.numel()
            ntok += y.numel()
            if step % 50 == 0:
                log(f"  lstm epoch {ep + 1} step {step}/{steps}: train ppl {np.exp(tot / ntok):.1f} "
                    f"[{time.perf_counter() - t0:.0f}s]")
    sd = {k: v.detach().numpy() for k, v in lm.state_dict().items()}
    arrays = LSTMScorer.arrays_from_float(sd["emb.weight"], sd["rnn.weight_ih_l0"], sd["rnn.weight_hh_l0"],
                                          sd["rnn.bias_ih_l0"] + sd["rnn.bias_hh_l0"], sd["out_b"], log_uni)
    meta = {"format": "treegram-vocabgen-lstm", "version": 1, "words": words,
            "info": {"sentences": len(seqs), "vocab_size": V, "dim": dim, "epochs": epochs, "seed": seed,
                     "train_ppl_last_epoch": round(float(np.exp(tot / max(ntok, 1))), 2),
                     "seconds": round(time.perf_counter() - t0)}}
    return meta, arrays


def from_bundle(meta: dict, arrays: dict[str, np.ndarray]) -> LSTMScorer:
    return LSTMScorer(meta["words"], arrays, meta.get("info"))
