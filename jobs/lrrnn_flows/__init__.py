"""lrRNN connectivity distributions via maximum entropy and flow matching (Kim et al., arXiv 2603.26506)."""
