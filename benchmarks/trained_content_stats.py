#!/usr/bin/env python3
"""Measures the exponent statistics of trained weights and AdamW states, for data.pattern = "trained".

Trains a small causal transformer language model (torch, CPU) on sequences drawn from a fixed
random sparse Markov chain, so that the loss falls and the gradients carry structure, then reads
each state the checkpoint holds: the bf16 weights (the fp32 master cast to bf16), the fp32 master
and AdamW's exp_avg and exp_avg_sq (fp32). For each state it prints, per tensor and pooled:

- the entropy of the exponent field (the bits a byte-grouping codec pays for the exponent),
  of the mantissa bits (near their width when they are incompressible) and of the sign;
- the exponent distribution relative to each tensor's most frequent exponent (its mode),
  averaged over the tensors weighted by elements, then quantised to 128ths (16 bins, the
  tails folded into the first and last): the table harness/memory/trained_words.hpp holds,
  with the mode used as the generator's top-of-distribution exponent.

Usage: trained_content_stats.py [--steps N] [--seed S] [--dump DIR]
  --dump DIR writes each state's bytes (all 2-D matrices concatenated, little-endian) as
  DIR/torch-<state>.bin, to compare compressibility with `ckptbench codec --file`.
Needs torch (any venv with torch); about half a minute of one core.
"""
import argparse
import collections
import math
import os

import torch

VOCAB, DIM, LAYERS, HEADS, SEQ, BATCH = 512, 128, 2, 4, 64, 8


class TinyLM(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = torch.nn.Embedding(VOCAB, DIM)
        self.pos = torch.nn.Embedding(SEQ, DIM)
        layer = torch.nn.TransformerEncoderLayer(DIM, HEADS, 4 * DIM, dropout=0.0, batch_first=True,
                                                 norm_first=True)
        self.blocks = torch.nn.TransformerEncoder(layer, LAYERS)
        self.norm = torch.nn.LayerNorm(DIM)
        self.head = torch.nn.Linear(DIM, VOCAB, bias=False)
        for p in self.parameters():
            if p.dim() == 2:
                torch.nn.init.normal_(p, std=0.02)  # GPT-2 / Megatron initialisation

    def forward(self, tokens):
        mask = torch.nn.Transformer.generate_square_subsequent_mask(tokens.shape[1])
        x = self.embed(tokens) + self.pos(torch.arange(tokens.shape[1]))
        return self.head(self.norm(self.blocks(x, mask=mask, is_causal=True)))


def markov_batches(generator):
    successors = torch.randint(0, VOCAB, (VOCAB, 4), generator=generator)
    while True:
        tokens = torch.empty(BATCH, SEQ + 1, dtype=torch.long)
        tokens[:, 0] = torch.randint(0, VOCAB, (BATCH,), generator=generator)
        for t in range(SEQ):
            pick = torch.randint(0, 4, (BATCH,), generator=generator)
            tokens[:, t + 1] = successors[tokens[:, t], pick]
        yield tokens


def train(steps, seed):
    torch.manual_seed(seed)
    model = TinyLM()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, betas=(0.9, 0.95), weight_decay=0.1)
    batches = markov_batches(torch.Generator().manual_seed(seed + 1))
    for step in range(steps):
        tokens = next(batches)
        logits = model(tokens[:, :-1])
        loss = torch.nn.functional.cross_entropy(logits.reshape(-1, VOCAB), tokens[:, 1:].reshape(-1))
        opt.zero_grad()
        loss.backward()
        opt.step()
        if step % 100 == 0 or step == steps - 1:
            print(f"# step {step}: loss {loss.item():.3f}")
    return model, opt


def fields(t, dtype):
    """(sign, exponent, mantissa) integer tensors of t as dtype's IEEE fields."""
    if dtype == torch.bfloat16:
        bits = t.to(torch.bfloat16).view(torch.int16).to(torch.int32) & 0xFFFF
        return bits >> 15, (bits >> 7) & 0xFF, bits & 0x7F
    bits = t.to(torch.float32).view(torch.int32).to(torch.int64) & 0xFFFFFFFF
    return bits >> 31, (bits >> 23) & 0xFF, bits & 0x7FFFFF


def entropy(counts):
    total = sum(counts.values())
    return -sum(c / total * math.log2(c / total) for c in counts.values() if c)


def mantissa_entropy_bits(mantissa, width):
    """Sum over the mantissa's bits of each bit's entropy (an upper bound of what it costs)."""
    total = 0.0
    for b in range(width):
        p = ((mantissa >> b) & 1).double().mean().item()
        total += 0 if p in (0.0, 1.0) else -(p * math.log2(p) + (1 - p) * math.log2(1 - p))
    return total


def quantise(relative, bins=16, scale=128):
    """The window of `bins` consecutive offsets holding the most mass (mass above it folded into
    its first bin, below into its last), in 128ths summing to 128: (first offset, counts)."""
    offsets = sorted(relative)
    first = max(range(offsets[0], offsets[-1] + 1),
                key=lambda o: sum(relative.get(o + k, 0.0) for k in range(bins)))
    probs = [relative.get(first + k, 0.0) for k in range(bins)]
    probs[0] += sum(p for off, p in relative.items() if off < first)
    probs[-1] += sum(p for off, p in relative.items() if off >= first + bins)
    raw = [p / sum(probs) * scale for p in probs]
    counts = [math.floor(r) for r in raw]
    for i in sorted(range(bins), key=lambda i: raw[i] - counts[i], reverse=True)[: scale - sum(counts)]:
        counts[i] += 1
    while counts[0] == 0:  # the top bin must occur
        counts.pop(0)
        counts.append(0)
        first += 1
    while counts and counts[-1] == 0:
        counts.pop()
    return first, counts


def report(name, tensors, dtype, dump):
    relative = collections.Counter()
    elements = 0
    weighted_exp_h = weighted_mant_h = 0.0
    modes = collections.Counter()
    sign_ones = 0
    for t in tensors:
        sign, exponent, mantissa = fields(t.detach().flatten(), dtype)
        counts = collections.Counter(exponent.tolist())
        mode = max(counts, key=counts.get)
        modes[mode] += t.numel()
        n = t.numel()
        elements += n
        weighted_exp_h += entropy(counts) * n
        weighted_mant_h += mantissa_entropy_bits(mantissa, 7 if dtype == torch.bfloat16 else 23) * n
        sign_ones += int(sign.sum())
        for e, c in counts.items():
            relative[mode - e] += c  # offset below the mode: negative above it
    rel = {off: c / elements for off, c in relative.items()}
    top, counts = quantise(rel)
    q = {k: c / 128 for k, c in enumerate(counts) if c}
    print(f"{name}: {len(tensors)} tensors, {elements} elements, dtype {str(dtype).split('.')[-1]}")
    print(f"  exponent entropy per tensor (weighted mean) {weighted_exp_h / elements:.3f} bits; "
          f"relative to the mode, pooled {entropy(relative):.3f}; quantised {entropy(q):.3f}")
    print(f"  mantissa bits' entropy (weighted mean) {weighted_mant_h / elements:.3f}; "
          f"sign ones {sign_ones / elements:.4f}")
    mode = modes.most_common(1)[0][0]
    print(f"  most common mode exponent {mode} (biased); top bin = mode {-top:+d} = {mode - top}")
    print(f"  128ths from the top bin down: {counts}")
    if dump:
        data = torch.cat([t.detach().flatten() for t in tensors]).to(dtype)
        with open(os.path.join(dump, f"torch-{name}.bin"), "wb") as f:
            f.write(data.view(torch.int16 if dtype == torch.bfloat16 else torch.int32).numpy().tobytes())


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--dump", default="")
    args = parser.parse_args()
    torch.set_num_threads(1)
    model, opt = train(args.steps, args.seed)
    matrices = [p for p in model.parameters() if p.dim() == 2]
    report("weight-bf16", matrices, torch.bfloat16, args.dump)
    report("master-fp32", matrices, torch.float32, args.dump)
    report("exp_avg-fp32", [opt.state[p]["exp_avg"] for p in matrices], torch.float32, args.dump)
    report("exp_avg_sq-fp32", [opt.state[p]["exp_avg_sq"] for p in matrices], torch.float32, args.dump)


if __name__ == "__main__":
    main()
