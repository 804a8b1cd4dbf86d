"""Mutation analysis of every task's check catalog: wrong configs the checks must reject (issue 14).

``operators`` holds the operator table (rule, routing and inhibition families in their own
modules), ``equivalence`` the broader probe set that tells an equivalent mutant from a
survivor, ``analysis`` grades and classifies, ``report`` prints the table and the JSON.
"""
