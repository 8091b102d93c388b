"""Evaluation frameworks that score outputs or metric sets without correlating with human scores.

- :mod:`.nugget`: nugget F(beta) of an answer or summary from its matched vital / okay nuggets and its
  length (Lin & Demner-Fushman, ACL-05 workshop);
- :mod:`.bradley_terry`: Bradley-Terry (and Davidson's tie model) maximum likelihood on per-pair win / loss /
  tie counts, batched over bootstrap resamples (Bradley & Terry 1952; Davidson 1970);
- :mod:`.qarla`: QARLA's QUEEN, KING and JACK over a tensor of similarities between peers and models
  (Amigó, Gonzalo, Peñas & Verdejo, ACL-05 workshop).
"""
