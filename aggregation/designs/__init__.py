"""The figures of the study designs: the method study's report (``report``, with its page, CSV, SVG and API in
``views``), the repeat, position-bias and adaptive-overlap figures stored by the recompute (``figures``), one round of
adaptive overlap written as item escalations (``adaptive``), and the study card on the lead dashboard
(``selectors``)."""
