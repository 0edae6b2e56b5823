"""Every setting an operator may change, in one pydantic-settings model.

Each setting is read from the environment as `INCIDENTLIB_<NAME>` (for example
`INCIDENTLIB_ROOT`), or given directly by the command line; the default and the help
stand beside each field.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import Field, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

__all__ = ["Settings"]


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="INCIDENTLIB_", extra="ignore", validate_default=True)

    root: Path = Field(
        default=Path("."),
        description="The data root: the folder that holds sources/, drafts/ and cases/.",
    )
    case_id_prefix: str = Field(
        default="IL",
        pattern=r"^[A-Z][A-Z0-9]*$",
        description="Prefix of published case ids (IL gives IL-0428).",
    )
    case_id_digits: int = Field(default=4, ge=4, le=9, description="Zero-padded width of the case number (at least 4).")
    case_id_start: int = Field(
        default=1,
        ge=1,
        description="The number the first case takes when cases/ holds none with this prefix.",
    )
    public_base_url: str = Field(
        default="https://benchlet.com/incidentlib/app/cases/",
        description="A published case's `url` is this followed by its id.",
    )
    required_languages: list[str] = Field(
        default=["en"],
        description="Languages every narrative field of a published case must have.",
    )

    @field_validator("root")
    @classmethod
    def _absolute_root(cls, value: Path) -> Path:
        return value.expanduser().resolve()
