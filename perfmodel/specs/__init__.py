"""Pydantic schemas for every catalog kind. The field descriptions are the schema documentation."""
