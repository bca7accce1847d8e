"""The maths of Penumbra, in pure numpy with no Django and nothing else of the project: IFS values and their
operators, signed preferences, agreement, item-level confidence intervals, annotator weights and consensus, human vs
model comparisons, sampling with inclusion probabilities, design-based accuracy and certification, the method-study
comparisons, position bias, self-consistency and adaptive overlap, and the dataset card's text. The modules build
only on each other, so a notebook can run any of them on arrays it built; pyproject.toml's contracts keep it so."""
