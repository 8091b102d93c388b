"""Evaluation frameworks that score outputs or metric sets without correlating with human scores.

- :mod:`.nugget`: nugget F(beta) of an answer or summary from its matched vital / okay nuggets and its
  length (Lin & Demner-Fushman, ACL-05 workshop);
- :mod:`.qarla`: QARLA's QUEEN, KING and JACK over a tensor of similarities between peers and models
  (Amigó, Gonzalo, Peñas & Verdejo, ACL-05 workshop).
"""
