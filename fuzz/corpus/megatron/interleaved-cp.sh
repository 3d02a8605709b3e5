#!/bin/bash
# A small interleaved, context-parallel run (a fuzz seed written for vTrain).
PP=4
CP=2
torchrun --nproc_per_node=8 --nnodes=4 pretrain_gpt.py \
    --num-layers 32 --hidden-size 2048 --ffn-hidden-size 5632 --num-attention-heads 16 \
    --group-query-attention --num-query-groups 4 --swiglu --normalization RMSNorm --disable-bias-linear \
    --seq-length 16384 --vocab-size 32000 \
    --tensor-model-parallel-size 2 --sequence-parallel \
    --pipeline-model-parallel-size $PP --num-layers-per-virtual-pipeline-stage 2 \
    --context-parallel-size ${CP} --cp-comm-type a2a \
    --micro-batch-size 1 --global-batch-size 32 --train-iters 1000 \
    --bf16 --fp8-format hybrid --fp8-recipe delayed \
    --use-distributed-optimizer --overlap-grad-reduce --ddp-bucket-size 20971520 \
    --use-tp-pp-dp-mapping
