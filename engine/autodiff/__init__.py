"""Gradients: generated backward (``backward``) and central-difference checks (``gradcheck``)."""
