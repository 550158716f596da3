"""The task view: a task run's phases, criteria, agents and answer, live."""

from foundry.ui.tasks.controller import TaskController
from foundry.ui.tasks.progress import TaskProgress
from foundry.ui.tasks.view import TaskView

__all__ = ["TaskController", "TaskProgress", "TaskView"]
